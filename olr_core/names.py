"""One display name per algorithm, user, data set, metric and parameter, for every legend, table and sentence of
the book: code identifiers stay in the code; a reader meets these names (:func:`name_of`), and generated text goes
through :func:`in_words`, which puts them in place of the identifiers it contains."""

import re

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


USER_NAMES = {"pbm": "PBM", "dbn": "DBN", "sdbn": "SDBN", "ccm": "CCM", "ubm": "UBM", "trust_bias": "trust bias",
              "all_labels": "all labels"}
DATASET_NAMES = {"mq2007": "MQ2007", "mq2008": "MQ2008", "mslr-web10k": "MSLR-WEB10K", "mslr-web30k": "MSLR-WEB30K",
                 "yahoo": "Yahoo!", "np2003": "NP2003", "ohsumed": "OHSUMED", "istella-s": "Istella-S",
                 "yandex-im2009": "Yandex IM2009", "cora": "Cora"}
METRIC_NAMES = {
    "discounted_online_ndcg10": "online NDCG@10 (discounted sum)", "mean_online_ndcg10": "mean online NDCG@10",
    "final_offline_ndcg10": "final offline NDCG@10", "mean_offline_ndcg10": "mean offline NDCG@10",
    "offline_ndcg10": "offline NDCG@10", "online_ndcg10": "online NDCG@10", "offline_ndcg": "offline NDCG@10",
    "online_ndcg": "online NDCG@10", "cumulative_online": "cumulative online NDCG@10",
    "avg_ndcg": "average NDCG", "avg_kl_cost": "average K-L cost", "kl_cost": "K-L cost",
    "avg_rel_click_distance": "average relative position of the chosen item",
    "rel_click_distance": "relative position of the chosen item",
    "clicked_first_rate": "share of queries with the chosen item first",
    "cosine_to_reference": "cosine to the reference", "block_size_at_1": "block size at rank 1",
    "n_blocks": "number of blocks", "certain_ratio_top": "share of certain orders at the top",
    "block10_excess": "block size at rank 10 above its floor", "bound_slack": "bound minus measured regret",
    "calibrated_floor": "margin over the calibrated floor", "cost_exponent": "cost's log-log slope",
    "lasting_regret": "share of the regret that lasts", "lda_overlap_excess": "LDA overlap above chance",
    "outside_share": "share of the update outside the document space", "regret_slope": "regret's log-log slope",
    "bound_over_trivial": "bound over the trivial bound", "rounds_run": "rounds", "p_value": "p",
}
PARAMETER_NAMES = {
    "learning_rate": "learning rate", "dsp_lambda": "DSP λ", "dsp_k": "DSP k", "dsp_r": "DSP r",
    "dsp_renormalize": "DSP renormalisation", "dsp_oracle": "DSP with the true examined set",
    "credit_samples": "credit samples", "stop_rule": "stop rule", "after_click": "after a click",
    "every_position": "every position", "nsgd_winners": "NSGD winners", "click_model": "user",
    "eval_every": "evaluated every", "eval_split": "evaluation split", "n_candidates": "candidates",
    "real_datasets": "real data sets",
}
COLUMN_NAMES = {"dataset": "data set", "click_model": "user", "algorithm": "method", "sd": "s.d.", "std": "s.d.",
                "paper_sd": "paper s.d.", "improvement_%": "gain %", "p_value": "p", "rounds_run": "rounds"}
WINDOWS = {"early": "early rounds", "late": "late rounds", "final": "at the end", "first": "first rounds",
           "last": "last rounds"}
OTHER_NAMES = {"x86_64": "x86-64", "not_testable": "not testable", "config_role": "configuration role"}
# the identifiers a reader may meet, each with its name (methods last: a method's name wins a clash)
NAMES = {**OTHER_NAMES, **PARAMETER_NAMES, **METRIC_NAMES, **DATASET_NAMES, **USER_NAMES, **DISPLAY_NAMES}
# identifiers that are also English words: renamed as a whole cell or label, never inside a sentence
ENGLISH = {"hits", "full", "choice", "code", "text", "random", "oracle", "perfect"}


def display_name(name) -> str:
    """The book's name for an algorithm, a label with its parameters in words: "MGD-DSP (DSP λ 0.5)"."""
    text = str(name)
    base, paren, rest = text.partition("(")
    if not paren or not rest.endswith(")"):
        return DISPLAY_NAMES.get(base, base) + paren + rest
    params = ", ".join(f"{name_of(k)} {v}" for k, _, v in (p.partition("=") for p in rest[:-1].split(",") if p))
    return f"{DISPLAY_NAMES.get(base, name_of(base))} ({params})" if params else DISPLAY_NAMES.get(base, base)


def name_of(identifier) -> str:
    """A reader's name for any identifier of the code: a method, user, data set, metric, parameter or column
    ("param:dsp_lambda" -> "DSP λ", "late:block_size_at_1" -> "block size at rank 1 (late rounds)",
    "neg_kl_cost" -> "negated K-L cost"); an identifier without a name reads with spaces for underscores."""
    text = str(identifier)
    if text in NAMES:
        return NAMES[text]
    base = text.partition("(")[0]
    if base in DISPLAY_NAMES:
        return display_name(text)
    head, colon, tail = text.partition(":")
    if colon and tail:
        if head == "param":
            return name_of(tail)
        return f"{name_of(tail)} ({WINDOWS.get(head, name_of(head))})"
    if text.startswith("neg_"):
        return f"negated {name_of(text[4:])}"
    return text.replace("_", " ")


def column_name(identifier) -> str:
    """A column's header in words: "click_model" -> "user", "paper_mean" -> "paper mean"."""
    return COLUMN_NAMES.get(str(identifier)) or name_of(identifier)


# In generated text: code spans, file names with their lines and URLs stay as they are; dotted module paths become
# code; an identifier (with "_" or a "prefix:", or the id of a method or data set) becomes its name.
_FILE = r"[\w./-]+\.(?:py|json|ya?ml|md|ipynb|csv|txt|gz|cfg|toml)(?::\d+(?:-\d+)?)?(?![\w])"
_TOKEN = re.compile(r"`[^`]*`|https?://\S+|" + _FILE
                    + r"|(?<![\w.-])[a-z_][a-z_0-9]+(?:\.[a-z_]\w+)+(?![\w(])"         # olr_core.rankers.dueling
                    + r"|(?<!\w)(?:[a-z]+:)?[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*(?:\([^()\s]*\))?")


_IDENTIFIER = r"(?:[a-z]+:)?[a-z][a-z0-9]*(?:_[a-z0-9%]+)+(?:\(.*\))?|[a-z]+:[a-z]\w*"


def in_words(text: str, markup: bool = True) -> str:
    """Generated text with the names a reader knows in place of code identifiers ("klrank_gper over any other
    method in kl_cost" -> "NoRegret KLRank over any other method in K-L cost"). Code spans, file names and URLs
    are kept; a dotted module path becomes a code span. With ``markup`` False (text pasted as it is, no Markdown)
    code spans lose their backticks."""
    def replace(match):
        token = match.group(0)
        if token.startswith("`"):
            return token if markup else token.strip("`")
        if "://" in token or re.fullmatch(_FILE, token):
            return f"`{token}`" if markup and "://" not in token else token
        if "." in token and "(" not in token:
            return f"`{token}`" if markup else token
        if token in ENGLISH or token.startswith("http"):
            return token
        return _token_words(token)
    return _TOKEN.sub(replace, str(text))


def _token_words(token: str) -> str:
    """One word of generated text in words: a known id or an identifier by its name; a hyphenated word part by part
    ("random-listnet_full" -> "random-ListNet (full feedback)"); anything else as it is."""
    if token in NAMES or token.partition("(")[0] in DISPLAY_NAMES:
        return name_of(token)
    if re.fullmatch(_IDENTIFIER, token):
        return name_of(token)
    if re.fullmatch(r"[\w-]+\([\w.:-]+=[^()\s]*\)", token):            # "DBGD(learning_rate=0.1,step=1.0)"
        return display_name(token)
    if "-" in token and "(" not in token:
        return "-".join(part if part in ENGLISH else _token_words(part) for part in token.split("-"))
    return token


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
