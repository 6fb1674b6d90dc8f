"""Learning to rank the solvers of a convolution problem: LightGBM's ``LGBMRanker`` (lambdarank), as
``lgbm_ranker`` on the tuning tasks (:class:`kgpubench.tasks.ranking.RankerModel`).

A query is one choice group (same GPU, same problem); labels are graded relevances (the fastest solver 30, one
level less per 2 % slower). Row and feature subsampling come from ``seed``. Outputs are scores, lowest = predicted
fastest (``predicts_target = False``).
"""

from __future__ import annotations

from kgpubench.tasks.ranking import RankerModel


def make_model(task, seed):
    return RankerModel(task=task, library="lightgbm", random_state=seed)
