"""Two fixes to what every page carries, so that a reader's browser logs no error.

- No thebe: launching is off (``launch_buttons.thebe: false``), yet jupyter-book always loads
  sphinx-thebe, which adds its configuration script (a ``const THEBE_JS_URL`` naming a network address,
  declared twice, so every page logged a JavaScript error) and its loader to every page. They are dropped.
- A light default colour mode: with none set, the theme's script logs "Got invalid theme mode" on the
  first page a reader opens (before the choice is stored in the browser).
"""


def _is_thebe(asset) -> bool:
    name = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "thebe" in name.lower() or "THEBE" in body


def _fix_page(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_thebe(asset)]
    if not context.get("default_mode"):
        context["default_mode"] = "light"


def setup(app):
    app.connect("html-page-context", _fix_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
