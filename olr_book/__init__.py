"""olr_book: the OL2R Book's driver, apart from the library (``olr_core``).

- :mod:`.manifest`: ``notebooks/manifest.yml`` as typed :class:`~.manifest.Page` specs, their parameters at a
  profile (run sizes from the papers' ``PROFILES``), checked once;
- :mod:`.execute`: one page executed with papermill in a process of its own, and its provenance box;
- :mod:`.build`: the build (pages side by side, a :class:`~.build.Build` owning its queues), Jupyter Book;
- :mod:`.stats`: the "Execution statistics" page; :mod:`.plan`: ``olr book --plan``;
- :mod:`.htmlcheck`, :mod:`.browsercheck`: the checks of the built pages.

Notebooks call :func:`page_sizes` to resolve the run sizes their parameters cell leaves at None.
"""

from .manifest import page_sizes

__all__ = ["page_sizes"]
