"""Author-year labels in the bibliography ("Jia et al. 2021"), matching the author-year citations
in the text (sphinxcontrib-bibtex's default labels are alphanumeric, e.g. "JWGW21")."""

import codecs

import latexcodec  # noqa: F401  (registers the "ulatex" codec)
from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def _surname(person) -> str:
    name = " ".join(person.prelast_names + person.last_names)
    return codecs.decode(name, "ulatex").replace("{", "").replace("}", "")


class AuthorYearLabels(BaseLabelStyle):
    """One author: "Burges 2005"; two: "Yue and Joachims 2009"; more: "Jia et al. 2021"."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            names = [_surname(p) for p in people]
            if not names:
                who = entry.fields.get("title", entry.key)[:20]
            elif len(names) == 1:
                who = names[0]
            elif len(names) == 2:
                who = f"{names[0]} and {names[1]}"
            else:
                who = f"{names[0]} et al."
            yield f"{who} {entry.fields.get('year', '')}".strip()


class AuthorYearStyle(UnsrtStyle):
    default_label_style = AuthorYearLabels
    default_sorting_style = "author_year_title"


def setup(app):
    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
    return {"parallel_read_safe": True}
