"""Every HTML visitor of a node for the single-page build too (``make pdf``).

Sphinx gives a builder the node visitors registered under its own name and falls back to those of its format
(``html``) only when none is registered under its name. sphinx-exercise registers its nodes for ``singlehtml``
by name, so that builder then loses every visitor registered for ``html`` alone, sphinx-proof's among them, and
stops at the first ``prf:definition`` with NotImplementedError. Here, once the builder is known, the visitors of
its format that its name lacks are added to its name's.
"""


def inherit_format_visitors(registry, name: str, format_: str) -> list[str]:
    """Copy into ``registry``'s visitors for builder ``name`` those of ``format_`` it lacks (none when ``name`` has
    no visitors of its own: Sphinx falls back to the format then). Returns the node names added."""
    own = registry.translation_handlers.get(name)
    if own is None or name == format_:
        return []
    missing = {node: pair for node, pair in registry.translation_handlers.get(format_, {}).items() if node not in own}
    own.update(missing)
    return sorted(missing)


def _on_builder_inited(app) -> None:
    inherit_format_visitors(app.registry, app.builder.name, app.builder.format)


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
