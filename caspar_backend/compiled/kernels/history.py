"""Writing one line of the iteration log into the history array (:mod:`.record`)."""
from ._jit import kernel
from .record import (HIST_ALPHA_DU, HIST_ALPHA_PR, HIST_D_NORM, HIST_INF_DU, HIST_INF_PR,
                     HIST_LS, HIST_MU, HIST_OBJECTIVE, HIST_REGULARIZATION, HIST_TAG)


@kernel
def history_row(Hist, it, objective, inf_pr, inf_du, mu, d_norm, delta_w, alpha_du,
                alpha_pr, ls, tag):
    """Row ``it`` of ``Hist`` (R, HIST_COLUMNS) from the log line's values, when it < R."""
    if it >= Hist.shape[0]:
        return
    row = Hist[it]
    row[HIST_OBJECTIVE] = objective
    row[HIST_INF_PR] = inf_pr
    row[HIST_INF_DU] = inf_du
    row[HIST_MU] = mu
    row[HIST_D_NORM] = d_norm
    row[HIST_REGULARIZATION] = delta_w
    row[HIST_ALPHA_DU] = alpha_du
    row[HIST_ALPHA_PR] = alpha_pr
    row[HIST_LS] = ls
    row[HIST_TAG] = tag
