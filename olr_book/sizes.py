"""Run sizes of the book's own pages that reproduce no paper (the papers' live in
``olr_core.reproductions.<paper>.experiments.PROFILES``).

``tiny``: what a notebook runs outside the book (the tests); ``quick`` and ``paper``: the book's profiles.
"""

PROFILES = {"tiny": {"baselines": {"seeds": 2, "rounds": 300},
                     "click_models": {"sessions": 2000, "fit_sessions": 4000}},
            "quick": {"baselines": {"seeds": 3, "rounds": 1000},
                      "click_models": {"sessions": 20_000, "fit_sessions": 20_000}},
            "paper": {"baselines": {"seeds": 15, "rounds": 10_000},
                      "click_models": {"sessions": 200_000, "fit_sessions": 200_000}}}
