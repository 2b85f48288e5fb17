"""Data: ragged ranking data, the LETOR reader, the synthetic default and the registry."""

from .letor import DataFormatError, read_letor, write_letor
from .ranking_data import Fold, Query, RankingData
from .registry import (
                       DATASETS,
                       DEFAULT_DATASET,
                       DataNotFoundError,
                       available,
                       describe,
                       get_spec,
                       load_fold,
                       load_library,
                       resolve_data_dir,
                       verify_checksums,
)
from .synthetic import PRESETS, generate, synthetic_fold

__all__ = ["DATASETS", "DEFAULT_DATASET", "DataFormatError", "DataNotFoundError", "Fold", "PRESETS", "Query",
           "RankingData", "available", "describe", "generate", "get_spec", "load_fold", "load_library", "read_letor",
           "resolve_data_dir", "synthetic_fold", "verify_checksums", "write_letor"]
