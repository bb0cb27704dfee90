"""Sphinx configuration: the API reference from the numpydoc docstrings, and
the user guide. Builds offline: no intersphinx, no remote assets."""

from __future__ import annotations

import sys
from pathlib import Path

import eyelike

# The local extension: the command line's --help, the benchmark's table.
sys.path.insert(0, str(Path(__file__).parent / "_ext"))
# The benchmark's --help (benchmarks/ at the top of the repository).
sys.path.insert(0, str(Path(__file__).parents[1]))

project = "eyelike"
author = "The eyelike developers"
copyright = "2026, The eyelike developers"
# The one source of the version: eyelike.__version__.
release = eyelike.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "numpydoc",
    "myst_parser",  # the changelog page includes CHANGELOG.md
    "eyelike_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}

exclude_patterns = ["_build"]
# `eye` in the docstrings links to eye; a name that is no object (`k`)
# shows as code.
default_role = "py:obj"
highlight_language = "python3"
pygments_style = "default"

# -- API reference ---------------------------------------------------------
autodoc_typehints = "none"  # the numpydoc Parameters sections say it all
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

# -- doctest ----------------------------------------------------------------
# Plain ">>>" blocks (in pages and docstrings) run too, not only directives.
doctest_test_doctest_blocks = "default"
doctest_global_setup = """
try:
    import cupy as _cupy

    HAS_CUDA = _cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no CuPy, no driver, no device: the GPU examples skip
    HAS_CUDA = False
try:
    import cubed as _cubed

    HAS_CUBED = True
except ImportError:  # cubed is optional: its page's examples skip
    HAS_CUBED = False
"""

# -- HTML ---------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"eyelike {release}"
html_static_path = ["_static"]
html_css_files = ["eyelike.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    # Nothing fetched at build or view time beyond these pages.
    "navigation_with_keys": False,
}
# Pages without sub-pages get no (empty) left sidebar.
html_sidebars = {page: [] for page in ("index", "api", "internals", "changelog")}
