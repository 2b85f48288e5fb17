"""No thebe on the pages: launching is off (``launch_buttons.thebe: false``), yet jupyter-book always loads
sphinx-thebe, which adds its configuration script (a ``const THEBE_JS_URL`` naming a network address,
declared twice, so every page logged a JavaScript error) and its loader to every page. This drops them."""


def _is_thebe(asset) -> bool:
    name = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "thebe" in name.lower() or "THEBE" in body


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_thebe(asset)]


def setup(app):
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
