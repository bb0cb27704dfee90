"""The rules every argument is checked against, once, before a backend
builds anything: integers (counts, batch shapes, scalar offsets; shared with
the operator adapters), dtypes, offsets ``k``, sizes, ``out=``, and how a
message shows a caller's value."""
