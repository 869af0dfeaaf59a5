"""Straightforward reference implementations of the reasoning-track endpoints' inference, looping over resamples in Python.

Kept out of the package on purpose: this is what the vectorized engine is measured against (bench/stats.py).
Each function follows the protocol's definitions directly: resample patients, flip signs, permute rows, one
resample at a time.
"""
import numpy as np


def _cells_by_patient(cluster, P):
    return [np.flatnonzero(cluster == p) for p in range(P)]


def bootstrap_means(values, mask, cluster, P, B, rng, level=0.95):
    """Percentile CIs of the mean over masked cells, per category and overall, resampling patients in a loop."""
    groups = _cells_by_patient(cluster, P)
    C = values.shape[1]
    reps = np.full((B, C + 1), np.nan)
    for b in range(B):
        chosen = rng.integers(0, P, P)
        rows = np.concatenate([groups[p] for p in chosen])
        v, m = values[rows], mask[rows]
        for c in range(C):
            if m[:, c].any(): reps[b, c] = v[m[:, c], c].mean()
        if m.any(): reps[b, C] = v[m].mean()
    return np.nanquantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0).T


def signflip_p(values, mask, cluster, P, B, rng):
    """One-sided Monte Carlo sign-flip p-values per category and overall, one sign pattern at a time."""
    S = np.zeros((P, values.shape[1]))
    for i in range(len(values)):
        S[cluster[i]] += np.where(mask[i], values[i], 0.0)
    S = np.hstack([S, S.sum(1, keepdims=True)])
    obs, hits = S.sum(0), np.zeros(S.shape[1])
    for b in range(B):
        signs = rng.choice([-1.0, 1.0], size=P)
        hits += (signs @ S) >= obs - 1e-9
    return (1 + hits) / (B + 1)


def permutation_agreement_p(delta_model, delta_ref, cluster, P, B, eps, rng):
    """Within-patient permutation p-values of the sign-agreement count, permuting model rows patient by patient."""
    groups = _cells_by_patient(cluster, P)
    R, nz = np.sign(delta_ref), delta_ref != 0

    def stat(dm):
        agree = (R * dm >= eps) & nz
        return np.append(agree.sum(0), agree.sum())

    obs, hits, total = stat(delta_model), 0, 0
    for b in range(B):
        perm = np.arange(len(delta_model))
        for g in groups:
            perm[g] = rng.permutation(g)
        null = stat(delta_model[perm])
        hits = hits + (null >= obs)
        total = total + null
    return (1 + hits) / (B + 1), total / B / np.append(nz.sum(0), nz.sum())


def class_correspondence_p(delta_ref, delta_model, B, rng):
    """Permutation p-value of Pearson r between per-category means, one permutation at a time."""
    x, y = delta_ref.mean(0), delta_model.mean(0)
    r = np.corrcoef(x, y)[0, 1]
    hits = 0
    for b in range(B):
        hits += np.corrcoef(x, rng.permutation(y))[0, 1] >= r - 1e-12
    return r, (1 + hits) / (B + 1)


def battery(inp, n_boot=1000, n_perm=10000, eps=0.01, seed=0):
    """The four reasoning-track endpoints of protocol 2 (overall and per category) with loops over resamples (one donor per pair).

    Directional alignment: the agreement with the correct chart minus with the donor's chart, sign-flip p-value, and the
    chance rate as the mean of the within-patient permutation null (protocol 1's test, kept as the descriptive reference)."""
    rng = np.random.default_rng(seed)
    P, dm, ds, dref = inp.n_patients, inp.delta_model, inp.delta_shuffled, inp.delta_ref
    allc, nz = np.ones_like(dm, bool), dref != 0
    diff = np.abs(dm) - np.abs(ds)
    out = {}
    out["context_sensitivity"] = (bootstrap_means(diff, allc, inp.cluster, P, n_boot, rng), signflip_p(diff, allc, inp.cluster, P, n_perm, rng))
    gap = (np.sign(dref) * dm >= eps).astype(float) - (np.sign(dref) * ds >= eps).astype(float)
    out["directional_alignment"] = (bootstrap_means(gap, nz, inp.cluster, P, n_boot, rng), signflip_p(gap, nz, inp.cluster, P, n_perm, rng),
                                    permutation_agreement_p(dm, dref, inp.cluster, P, n_perm, eps, rng)[1])
    out["class_correspondence"] = class_correspondence_p(dref, dm, n_perm, rng)
    spec = np.sign(dref) * (dm - ds)
    out["context_specificity"] = (bootstrap_means(spec, nz, inp.cluster, P, n_boot, rng), signflip_p(spec, nz, inp.cluster, P, n_perm, rng))
    return out
