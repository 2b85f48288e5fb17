"""One display name per algorithm, for every legend, table and sentence of the book."""

DISPLAY_NAMES = {
    "olranknet": "olRankNet", "ollambdarank": "olLambdaRank", "ollambdarank_gt": "olLambdaRank GT",
    "pairrank_c": "PairRank_C", "pairrank_r": "PairRank_R", "pdgd": "PDGD", "neural_pdgd": "neural PDGD",
    "sgd_ranknet": "SGD RankNet", "epsilon_greedy": "ε-greedy RankNet", "dbgd": "DBGD", "neural_dbgd": "neural DBGD",
    "dbgd_dsp": "DBGD-DSP", "mgd": "MGD", "mgd_dsp": "MGD-DSP", "nsgd": "NSGD", "nsgd_dsp": "NSGD-DSP",
    "topk_ranksvm": "RTop-kF RankSVM", "topk_kl": "RTop-kF KL", "topk_squared": "RTop-kF squared",
    "topk_smoothdcg": "RTop-kF SmoothDCG", "listnet_full": "ListNet (full feedback)", "klrank_gper": "NoRegret KLRank",
    "klrank_greedy": "greedy KLRank", "online_ranknet_gper": "online RankNet", "category_ranking": "category ranking",
    "hits": "HITS", "pagerank": "PageRank", "mcrank": "McRank", "offline_ranknet": "offline RankNet",
    "offline_lambdarank": "offline LambdaRank", "oracle": "oracle", "random": "random",
}


# The book's families of algorithms: a figure with more curves than fit one panel shows one family per row.
FAMILIES = {
    "dueling bandit gradient descent": ["dbgd", "dbgd_dsp", "mgd", "mgd_dsp", "nsgd", "nsgd_dsp"],
    "pairwise learners": ["pairrank_c", "pairrank_r", "epsilon_greedy", "sgd_ranknet", "pdgd"],
    "neural online learners": ["olranknet", "ollambdarank", "ollambdarank_gt", "neural_pdgd", "neural_dbgd"],
    "top-k feedback": ["topk_ranksvm", "topk_kl", "topk_squared", "topk_smoothdcg", "listnet_full"],
    "growing library": ["klrank_gper", "klrank_greedy", "online_ranknet_gper", "category_ranking", "hits",
                        "pagerank", "mcrank"],
    "references": ["offline_ranknet", "offline_lambdarank", "oracle", "random"],
}
FAMILY_OF = {name: family for family, members in FAMILIES.items() for name in members}


def display_name(name) -> str:
    """The book's name for an algorithm (a label with parameters keeps them: "MGD-DSP(dsp_lambda=0.5)")."""
    text = str(name)
    base, paren, rest = text.partition("(")
    return DISPLAY_NAMES.get(base, base) + paren + rest


def display_names(frame):
    """``frame`` (a pandas DataFrame or Series) with algorithm ids replaced by their display names wherever a
    reader sees them: the index, the column labels and an ``algorithm`` column. Other labels pass unchanged."""
    def rename(labels):
        return labels.map(lambda v: tuple(display_name(p) for p in v) if isinstance(v, tuple) else display_name(v))

    out = frame.copy()
    out.index = rename(out.index)
    if hasattr(out, "columns"):
        out.columns = rename(out.columns)
        if "algorithm" in out.columns:
            out["algorithm"] = out["algorithm"].map(display_name)
    return out
