"""Learning to rank: XGBoost's ``XGBRanker`` (``rank:ndcg`` with top-k pairs) over the configurations of each
problem; queries, labels and seeding as in ``lgbm_ranker.py`` (:class:`kgpubench.tasks.ranking.RankerModel`).
Outputs are scores, lowest = predicted fastest.
"""

from __future__ import annotations

from kgpubench.tasks.ranking import RankerModel


def make_model(task, seed):
    return RankerModel(task=task, library="xgboost", random_state=seed)
