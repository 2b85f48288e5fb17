"""What a run plays: a LETOR data set of query folds or a growing-library stream, as a type.

A :class:`Task` owns what differs between the two: the default user and number of rounds, the learners that
run on it, the users it accepts and the fingerprint of its data. :func:`task_of` is the one place that asks
which kind a data set is; the CLI, the run spec and the runner ask the task.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..data.registry import DatasetSpec, get_spec, load_fold, load_library
from ..params import ParameterError
from ..rankers import ALGORITHMS, LIBRARY_ALGORITHMS
from ..users import UserSpec


@dataclass(frozen=True)
class Task:
    """A data set as a task: ``dataset`` is its registry entry."""

    dataset: DatasetSpec
    default_user = "navigational"
    kind = "LETOR data sets"
    summary_keys = ()                   # what ``olr run`` prints of a run's summary

    @property
    def learners(self) -> tuple[str, ...]:
        """The built-in algorithms that run on this task (``random`` runs on both)."""
        raise NotImplementedError

    def default_rounds(self, data_dir=None) -> int:
        raise NotImplementedError

    def fingerprint(self, fold: int, data_dir=None) -> str:
        raise NotImplementedError

    def check_user(self, user: UserSpec) -> None:
        """A one-line ParameterError if the task's data cannot be shown to ``user``."""

    def takes(self, algorithm: str) -> bool:
        raise NotImplementedError

    def check_learner(self, algorithm: str) -> None:
        """A one-line ParameterError if ``algorithm`` does not run on this task."""
        if not self.takes(algorithm):
            raise ParameterError(f"{algorithm} does not run on {self.dataset.name}; algorithms for {self.kind}: "
                                 f"{', '.join(self.learners)}")


@dataclass(frozen=True)
class LetorTask(Task):
    """Query folds with graded documents: rounds of a query, a shown list and a simulated user's feedback."""

    summary_keys = ("final_offline_ndcg10", "discounted_online_ndcg10", "summed_online_ndcg10",
                           "mean_online_ndcg10", "rounds", "seconds")

    @property
    def learners(self) -> tuple[str, ...]:
        return tuple(sorted(set(ALGORITHMS) - set(LIBRARY_ALGORITHMS) | {"random"}))

    def takes(self, algorithm: str) -> bool:
        """Every learner but the library rankers (a plug-in too)."""
        return algorithm == "random" or algorithm not in LIBRARY_ALGORITHMS

    def default_rounds(self, data_dir=None) -> int:
        return 1000

    def fingerprint(self, fold: int, data_dir=None) -> str:
        return load_fold(self.dataset.name, fold, data_dir).fingerprint()


@dataclass(frozen=True)
class LibraryTask(Task):
    """A growing library (KLRank chapter): items arrive, each user chooses one; played once, whole."""

    default_user = "choice"
    kind = "growing-library streams"
    summary_keys = ("queries", "avg_kl_cost", "kl_cost_infinite", "avg_rel_click_distance",
                           "clicked_first_rate", "avg_ndcg", "seconds")

    @property
    def learners(self) -> tuple[str, ...]:
        return LIBRARY_ALGORITHMS

    def takes(self, algorithm: str) -> bool:
        """The library rankers only."""
        return algorithm in LIBRARY_ALGORITHMS

    def default_rounds(self, data_dir=None) -> int:
        return load_library(self.dataset.name, data_dir).n_queries

    def fingerprint(self, fold: int, data_dir=None) -> str:
        return load_library(self.dataset.name, data_dir).fingerprint()

    def check_user(self, user: UserSpec) -> None:
        if user.name != "choice":
            raise ParameterError(f"{self.dataset.name} is a growing-library stream whose users reveal the item "
                                 f"they chose; use click model 'choice' (got {user.name!r})")


def task_of(dataset: str) -> Task:
    """The task of data set ``dataset`` (an unknown name raises, listing the valid ones)."""
    spec = get_spec(dataset)
    return LibraryTask(spec) if spec.library else LetorTask(spec)
