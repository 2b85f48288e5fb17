"""Run sizes of the book's own pages that reproduce no paper (the papers' live in
``olr_core.reproductions.<paper>.experiments.PROFILES``).

``tiny``: what a notebook runs outside the book (the tests); ``quick`` and ``paper``: the book's profiles.
"""

PROFILES = {"tiny": {"baselines": {"seeds": 2, "rounds": 300}},
            "quick": {"baselines": {"seeds": 3, "rounds": 1000}},
            "paper": {"baselines": {"seeds": 15, "rounds": 10_000}}}
