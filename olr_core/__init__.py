"""olr_core: algorithms, simulated users, data and the experiment runner of the OL2R Book."""

__version__ = "0.1.0"
