"""Shared input handling for models: numeric imputation, optional min-max scaling, one-hot strings.

Baselines (and user submissions) may use these so that every model sees the task's features the same way.
"""

from __future__ import annotations

import numpy as np


def tabular_preprocessor(*, scale: bool = False, one_hot: bool = True):
    """A ``ColumnTransformer``: numbers -> median-imputed (and min-max scaled to [0, 1] when ``scale``);
    strings -> one-hot (unknown categories at predict time become all zeros) or ordinal codes.

    Parameters
    ----------
    scale : bool
        Min-max scale numeric columns (seed 000's normalisation).
    one_hot : bool
        One-hot encode strings (else ordinal codes, unknown -> -1; enough for trees).
    """
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, OrdinalEncoder

    numeric = [SimpleImputer(strategy="median", keep_empty_features=True)]
    if scale:
        numeric.append(MinMaxScaler())
    if one_hot:
        strings = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    else:
        strings = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    return ColumnTransformer(
        [("num", make_pipeline(*numeric), make_column_selector(dtype_include=np.number)),
         ("str", strings, make_column_selector(dtype_include=[object, "string"]))],
        sparse_threshold=0.0,
    )


def log_target(regressor):
    """Wrap ``regressor`` to learn ``ln(y)`` and predict ``exp`` of it (times span orders of magnitude)."""
    from sklearn.compose import TransformedTargetRegressor

    return TransformedTargetRegressor(regressor=regressor, func=np.log, inverse_func=np.exp, check_inverse=False)


def tabular_model(estimator, *, scale: bool = False, one_hot: bool = True, log: bool = True):
    """``preprocessor -> estimator`` as one pipeline, learning log(target) when ``log``."""
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(tabular_preprocessor(scale=scale, one_hot=one_hot), estimator)
    return log_target(pipe) if log else pipe
