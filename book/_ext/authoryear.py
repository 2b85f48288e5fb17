"""Author-year labels in the bibliography ("Jia et al. 2021"), matching the author-year citations
in the text (sphinxcontrib-bibtex's default labels are alphanumeric, e.g. "JWGW21")."""

import codecs
from collections import Counter

import latexcodec  # noqa: F401  (registers the "ulatex" codec)
from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def _surname(person) -> str:
    name = " ".join(person.prelast_names + person.last_names)
    return codecs.decode(name, "ulatex").replace("{", "").replace("}", "")


class AuthorYearLabels(BaseLabelStyle):
    """One author: "Burges 2005"; two: "Yue and Joachims 2009"; more: "Jia et al. 2021". Labels that
    would be equal get letters in the bibliography's order: "Guo et al. 2009a", "Guo et al. 2009b"."""

    def format_labels(self, sorted_entries):
        labels = [self._label(entry) for entry in sorted_entries]
        counts = Counter(labels)
        seen = Counter()
        for label in labels:
            if counts[label] > 1:
                seen[label] += 1
                label = f"{label}{'abcdefghijklmnopqrstuvwxyz'[seen[label] - 1]}"
            yield label

    @staticmethod
    def _label(entry) -> str:
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
        return f"{who} {entry.fields.get('year', '')}".strip()


class AuthorYearStyle(UnsrtStyle):
    default_label_style = AuthorYearLabels
    default_sorting_style = "author_year_title"


def setup(app):
    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
    return {"parallel_read_safe": True}
