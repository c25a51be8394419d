#!/usr/bin/env python3
"""Staging lab: a numpy replica of the stager's fit and forward–backward, for trying changes
to the staging model quickly, outside Swift (docs/staging.md, "What was tried").

Not part of the build or the tests; needs Python 3 and numpy. The figures that count are the
bench's (`make bench`); this replica reproduces its leave-one-subject-out figures per kind of
night exactly, which is what makes the variants below comparable: read epoch by epoch (`loso`,
the bench's `staging.loso_epoch_argmax`: slpdb-dev κ4 0.332, κ2 0.384, TST +9.5 min;
sleep-accel-dev 0.367 / 0.427, +8.3 min), and by the night's wake share as shipped (`decoding`,
"expected wake x1.0": 0.341 / 0.394, +5.0; 0.367 / 0.424, +2.6).

Inputs come from the bench:

    .build/release/podbridge-bench --dump-staging-features /tmp/feat.csv
    .build/release/podbridge-bench --dump-epochs /tmp/epochs.csv

Commands:

    staging-lab.py loso FEAT                 the shipped per-kind models, LOSO
    staging-lab.py centring FEAT             heart rate / its spread relative to the night
    staging-lab.py spectral FEAT EPOCHS      spectral HRV features added to the beats model
    staging-lab.py separation EPOCHS         per night: how well each signal ranks awake above sleep
    staging-lab.py lookalike EPOCHS          synthetic and pod nights: awake epochs by what they were called
    staging-lab.py trend FEAT                the night's heart-rate trend removed (beats model), nested choice
    staging-lab.py nested FEAT               the beats model's settings, nested leave-one-subject-out
    staging-lab.py shares FEAT               each night's stage mix estimated from its own evidence
    staging-lab.py decoding FEAT             Viterbi, or the awake count the posteriors expect, for the argmax
    staging-lab.py adapt FEAT                each night's own emission means by EM, shrunk to the fitted ones
    staging-lab.py ensemble FEAT             the per-kind model's posteriors pooled with the pooled model's

`centring` and `spectral` start from the beats model as it was before it read the detrended
heart rate (FOURTH_ROUND_KINDS), as their rows in docs/staging.md do.
"""
import collections
import copy
import csv
import sys

import numpy as np

STAGES = ["awake", "core", "deep", "rem"]
# Feature columns of --dump-staging-features, in StagingFeatures order.
MOVEMENT, HR, SPREAD, RMSSD, HOURS, HR_DETRENDED = range(6)
# The shipped per-kind models: features used and emission weight (StagingModels).
KINDS = {"slpdb": ([HR_DETRENDED, SPREAD, RMSSD], 0.2), "sleep-accel": ([MOVEMENT, HR, SPREAD, HOURS], 0.2)}
# The beats model before it read the detrended heart rate (the fourth round's baseline).
FOURTH_ROUND_KINDS = {"slpdb": ([HR, SPREAD, RMSSD], 0.2), "sleep-accel": KINDS["sleep-accel"]}
# The pooled model (StagingModels: every labelled night, the heart rate as measured).
POOLED = ([MOVEMENT, HR, SPREAD, RMSSD, HOURS], 0.5)
REPO = __file__.rsplit("/scripts/", 1)[0]


def load_features(path):
    rows = list(csv.DictReader(open(path)))
    names = list(rows[0].keys())[4:]
    nights = collections.OrderedDict()
    for r in rows:
        n = nights.setdefault(r["record"], {"subject": r["subject"], "dataset": r["dataset"], "X": [], "y": []})
        n["X"].append([float(r[k]) if r[k] != "" else np.nan for k in names])
        n["y"].append(STAGES.index(r["stage"]) if r["stage"] else -1)
    for n in nights.values():
        n["X"], n["y"] = np.array(n["X"]), np.array(n["y"])
    return nights


def fit(nights, use, weight):
    """StagingModel.fit: class means and pooled covariance over measured values, counted transitions."""
    k, d = 4, len(use)
    sums, seen, counts = np.zeros((k, d)), np.zeros((k, d)), np.zeros(k)
    trans = np.full((k, k), 0.5)
    for n in nights:
        X, y = n["X"][:, use], n["y"]
        for i, s in enumerate(y):
            if s < 0:
                continue
            counts[s] += 1
            m = ~np.isnan(X[i])
            sums[s, m] += X[i, m]
            seen[s, m] += 1
            if i > 0 and y[i - 1] >= 0:
                trans[y[i - 1], s] += 1
    mu = sums / np.maximum(seen, 1)
    cov, pairs = np.zeros((d, d)), np.zeros((d, d))
    for n in nights:
        X, y = n["X"][:, use], n["y"]
        ok = y >= 0
        R = X[ok] - mu[y[ok]]
        M = ~np.isnan(R)
        R0 = np.where(M, R, 0)
        cov += R0.T @ R0
        pairs += M.T.astype(float) @ M.astype(float)
    cov = np.where(pairs > 1, cov / np.maximum(pairs - 1, 1), 0) + np.eye(d) * 1e-3
    return dict(mu=mu, cov=cov, T=trans / trans.sum(1, keepdims=True), pi=counts / counts.sum(), w=weight, use=use)


def emissions(m, X):
    """Tempered Gaussian log-likelihoods over the features present (marginalised)."""
    X = X[:, m["use"]]
    L, cache = np.zeros((len(X), 4)), {}
    for i in range(len(X)):
        present = ~np.isnan(X[i])
        if not present.any():
            continue
        key = tuple(present)
        if key not in cache:
            cache[key] = np.linalg.inv(m["cov"][np.ix_(present, present)])
        r = X[i, present] - m["mu"][:, present]
        L[i] = -0.5 * np.einsum("ka,ab,kb->k", r, cache[key], r) * m["w"]
    return L


def forward_backward(m, L):
    e = np.exp(L - L.max(1, keepdims=True))
    a = np.zeros_like(e)
    a[0] = m["pi"] * e[0]
    a[0] /= a[0].sum()
    for i in range(1, len(e)):
        a[i] = (a[i - 1] @ m["T"]) * e[i]
        a[i] /= a[i].sum()
    post, b = a.copy(), np.ones(4)
    for i in range(len(e) - 2, -1, -1):
        b = m["T"] @ (e[i + 1] * b)
        b /= b.sum()
        post[i] = a[i] * b
        post[i] /= post[i].sum()
    return post


def kappa(y, p, k):
    C = np.zeros((k, k))
    for a, b in zip(y, p):
        C[a, b] += 1
    n = C.sum()
    po, pe = np.trace(C) / n, (C.sum(0) * C.sum(1)).sum() / n**2
    return (po - pe) / (1 - pe)


def loso(nights, dataset, use, weight):
    """Leave one subject out within a dataset: {record: (reference, predicted)} over scored epochs."""
    sel = {k: v for k, v in nights.items() if v["dataset"] == dataset}
    out = {}
    for subject in sorted({v["subject"] for v in sel.values()}):
        m = fit([v for v in sel.values() if v["subject"] != subject], use, weight)
        for k, v in sel.items():
            if v["subject"] == subject:
                p = forward_backward(m, emissions(m, v["X"])).argmax(1)
                ok = v["y"] >= 0
                out[k] = (v["y"][ok], p[ok])
    return out


def report(results, label):
    Y = np.concatenate([r[0] for r in results.values()])
    P = np.concatenate([r[1] for r in results.values()])
    three, two = np.array([0, 1, 1, 2]), np.array([0, 1, 1, 1])
    tst = {k: ((r[1] != 0).sum() - (r[0] != 0).sum()) * 0.5 for k, r in results.items()}
    off = {k: v for k, v in tst.items() if abs(v) > 60}
    print(f"{label:34s} k4 {kappa(Y, P, 4):.3f} k3 {kappa(three[Y], three[P], 3):.3f} k2 {kappa(two[Y], two[P], 2):.3f} "
          f"tst {np.mean(list(tst.values())):+.1f} min, > 60 min: {', '.join(f'{k} {v:+.1f}' for k, v in off.items()) or 'none'}")


def with_rows(nights, change):
    out = copy.deepcopy(nights)
    for v in out.values():
        v["X"] = change(v["X"])
    return out


def centred(columns, q=50):
    def change(X):
        X = X.copy()
        for c in columns:
            X[:, c] -= np.nanpercentile(X[:, c], q)
        return X
    return change


def cmd_loso(feat):
    nights = load_features(feat)
    for ds, (use, w) in KINDS.items():
        report(loso(nights, ds, use, w), f"shipped {ds}")


def cmd_centring(feat):
    nights = load_features(feat)
    for label, change in [("as shipped", lambda X: X), ("spread - night median", centred([SPREAD])),
                          ("spread - night p10", centred([SPREAD], 10)), ("hr - night median (not p10)", centred([HR])),
                          ("hr and spread - night median", centred([HR, SPREAD]))]:
        for ds, (use, w) in FOURTH_ROUND_KINDS.items():
            report(loso(with_rows(nights, change), ds, use, w), f"{label} / {ds}")


def clean_intervals(beats):
    """BeatIntervals: 0.3–2.0 s and within 20 % of the median of the 11 around."""
    rr, t = np.diff(beats), beats[1:]
    med = np.array([np.median(rr[max(0, i - 5):i + 6]) for i in range(len(rr))])
    ok = (rr > 0.3) & (rr < 2.0) & (np.abs(rr - med) < 0.2 * med)
    return t[ok], rr[ok]


def spectral_features(record, starts, half=150, fs=4.0):
    """Per epoch, over 5 min around it: log LF/HF, log VLF/(LF+HF), log HF of heart rate resampled at 4 Hz."""
    beats = np.array([float(x) for x in open(f"{REPO}/Data/slpdb-dev/{record}.beats.csv").read().split()[1:]])
    t, rr = clean_intervals(beats)
    out = []
    for start in starts:
        c = start + 15
        inside = (t >= c - half) & (t < c + half)
        if inside.sum() < half:
            out.append([np.nan] * 3)
            continue
        grid = np.arange(c - half, c + half, 1 / fs)
        x = 60 / np.interp(grid, t[inside], rr[inside])
        x = (x - x.mean()) * np.hanning(len(x))
        power, f = np.abs(np.fft.rfft(x)) ** 2, np.fft.rfftfreq(len(x), 1 / fs)
        band = lambda lo, hi: power[(f >= lo) & (f < hi)].sum() + 1e-3
        vlf, lf, hf = band(0.01, 0.04), band(0.04, 0.15), band(0.15, 0.4)
        out.append([np.log(lf / hf), np.log(vlf / (lf + hf)), np.log(hf)])
    out = np.array(out)
    return out - np.nanmedian(out, 0)


def cmd_spectral(feat, epochs):
    nights = load_features(feat)
    base = next(iter(nights.values()))["X"].shape[1]  # the spectral columns go after the dump's
    starts = collections.defaultdict(list)
    for r in csv.DictReader(open(epochs)):
        if r["dataset"] == "slpdb":
            starts[r["record"]].append(int(r["t"]))
    for rec, v in nights.items():
        if v["dataset"] == "slpdb":
            v["X"] = np.hstack([v["X"], spectral_features(rec, starts[rec])])
    LFHF, VLF, LOGHF = base, base + 1, base + 2
    for label, use in [("beats model", [HR, SPREAD, RMSSD]), ("+ LF/HF", [HR, SPREAD, RMSSD, LFHF]),
                       ("+ VLF/(LF+HF)", [HR, SPREAD, RMSSD, VLF]), ("+ log HF", [HR, SPREAD, RMSSD, LOGHF]),
                       ("+ all three", [HR, SPREAD, RMSSD, LFHF, VLF, LOGHF]), ("LF/HF instead of RMSSD", [HR, SPREAD, LFHF])]:
        report(loso(nights, "slpdb", use, 0.2), label)


def auc(pos, neg):
    pos, neg = pos[~np.isnan(pos)], neg[~np.isnan(neg)]
    ranks = np.concatenate([pos, neg]).argsort().argsort() + 1
    return (ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def value(x):
    return float(x) if x else np.nan


def cmd_separation(epochs):
    by = collections.defaultdict(list)
    for r in csv.DictReader(open(epochs)):
        if r["dataset"] in ("slpdb", "sleep-accel") and r["stage"]:
            by[(r["dataset"], r["record"])].append(r)
    for (ds, rec), rs in by.items():
        awake = np.array([r["stage"] == "awake" for r in rs])
        line = []
        for k, sign in [("hr", 1), ("rmssd", -1), ("hr_sd", 1), ("movement", 1)]:
            v = sign * np.array([value(r[k]) for r in rs])
            if not np.isnan(v).all():
                line.append(f"{k} {auc(v[awake], v[~awake]):.2f}")
        print(f"{ds:12s} {rec:14s} awake share {awake.mean():.2f}  AUC awake vs sleep: {'  '.join(line)}")


def cmd_lookalike(epochs):
    by = collections.defaultdict(list)
    for r in csv.DictReader(open(epochs)):
        if r["dataset"] in ("nightmodel", "pod") and r["present"] == "1":
            by[(r["dataset"], r["record"])].append(r)
    groups = collections.defaultdict(list)
    for (ds, rec), rs in by.items():
        p10 = np.nanpercentile([value(r["hr"]) for r in rs], 10)
        for r in rs:
            if r["stage"]:
                key = f"awake called {r['predicted']}" if r["stage"] == "awake" else r["stage"]
                groups[(ds, key)].append([value(r["hr"]) - p10, value(r["hr_sd"]), value(r["breathing"]),
                                          value(r["breathing_cv"]), value(r["movement"])])
    for (ds, key), v in sorted(groups.items()):
        v = np.array(v)
        print(f"{ds:10s} {key:18s} n {len(v):5d}  hr - p10 {np.nanmean(v[:, 0]):4.1f}  hr sd {np.nanmean(v[:, 1]):4.2f}  "
              f"breathing {np.nanmean(v[:, 2]):5.2f}  cv {np.nanmedian(v[:, 3]):.3f}  movement median {np.nanmedian(v[:, 4]):.2f}")


def detrended(quadratic, lower_half=False):
    """Heart rate minus its least-squares trend over the night's hours (linear or parabola; fitted
    to the lower half of the rates if asked), above the result's 10th percentile."""
    def change(X):
        X = X.copy()
        h, y = X[:, HOURS], X[:, HR]
        ok = ~np.isnan(y)
        if ok.sum() < 20 or np.ptp(h[ok]) < 2:
            return X
        powers = [1, 2] if quadratic else [1]
        A = np.vstack([np.ones(ok.sum())] + [h[ok] ** k for k in powers]).T
        keep = np.ones(ok.sum(), bool)
        for _ in range(5 if lower_half else 1):
            c = np.linalg.lstsq(A[keep], y[ok][keep], rcond=None)[0]
            r = y[ok] - A @ c
            keep = r <= np.median(r)
        X[:, HR] = y - sum(c[i + 1] * h ** k for i, k in enumerate(powers))
        X[:, HR] -= np.nanpercentile(X[:, HR], 10)
        return X
    return change


def nested_slpdb(variants):
    """For each held-out slpdb subject, the variant (name, nights, features, weight) with the best
    κ4 + κ2 over an inner leave-one-subject-out of the other subjects, fitted on them and staging
    the held-out nights: ({record: (reference, predicted)}, {subject: chosen name})."""
    two, out, picks = np.array([0, 1, 1, 1]), {}, {}
    nights = variants[0][1]
    for s in sorted({v["subject"] for v in nights.values() if v["dataset"] == "slpdb"}):
        def inner_score(variant):
            res = loso({k: v for k, v in variant[1].items() if v["subject"] != s}, "slpdb", variant[2], variant[3])
            Y = np.concatenate([r[0] for r in res.values()])
            P = np.concatenate([r[1] for r in res.values()])
            return kappa(Y, P, 4) + kappa(two[Y], two[P], 2)
        name, ns, use, w = max(variants, key=inner_score)
        picks[s] = name
        m = fit([v for v in ns.values() if v["dataset"] == "slpdb" and v["subject"] != s], use, w)
        for k, v in ns.items():
            if v["dataset"] == "slpdb" and v["subject"] == s:
                p = forward_backward(m, emissions(m, v["X"])).argmax(1)
                ok = v["y"] >= 0
                out[k] = (v["y"][ok], p[ok])
    return out, picks


def cmd_trend(feat):
    """The beats model with the night's heart-rate trend removed: each variant, then the variant
    chosen per held-out subject by an inner leave-one-subject-out (κ4 + κ2) on the others."""
    nights = load_features(feat)
    variants = {"as measured": lambda X: X, "linear": detrended(False), "linear, lower half": detrended(False, True),
                "parabola": detrended(True), "parabola, lower half": detrended(True, True)}
    changed = {name: with_rows(nights, change) for name, change in variants.items()}
    for ds, (u, wk) in FOURTH_ROUND_KINDS.items():
        for name, ns in changed.items():
            report(loso(ns, ds, u, wk), f"{name} / {ds}")
    use, w = FOURTH_ROUND_KINDS["slpdb"]
    out, picks = nested_slpdb([(name, ns, use, w) for name, ns in changed.items()])
    print("inner choices:", "; ".join(picks.values()))
    report(out, "nested choice / slpdb")


def cmd_nested(feat):
    """The beats model's settings chosen per held-out subject by an inner leave-one-subject-out
    (κ4 + κ2) over the other subjects: emission weight × hours in bed × which heart rate. The
    sleep-accel model's inner loop chose the shipped weight in every fold (docs/staging.md),
    so its held-out nights are staged as shipped."""
    import itertools
    nights = load_features(feat)
    variants = []
    for w, hours, column in itertools.product([0.2, 0.3, 0.5], [False, True], [HR, HR_DETRENDED]):
        name = f"weight {w}, {'with' if hours else 'without'} hours in bed, {'detrended' if column == HR_DETRENDED else 'measured'} heart rate"
        variants.append((name, nights, [column, SPREAD, RMSSD] + ([HOURS] if hours else []), w))
    out, picks = nested_slpdb(variants)
    for s, name in picks.items():
        print(f"  {s}: {name}")
    report(out, "nested / slpdb")
    out.update(loso(nights, "sleep-accel", *KINDS["sleep-accel"]))
    report(out, "nested / all 30")


def night_shares(m, X, prior, rounds=200):
    """A night's stage shares by EM on the mixture weights, the stage densities fixed (untempered,
    per epoch, no transitions), with a prior of `prior` epochs at the training shares."""
    L = emissions(m, X) / m["w"]
    e = np.exp(L - L.max(1, keepdims=True))
    pi = m["pi"].copy()
    for _ in range(rounds):
        r = e * pi
        r /= r.sum(1, keepdims=True)
        pi = (r.sum(0) + prior * m["pi"]) / (len(X) + prior)
    return pi


def cmd_shares(feat):
    """Each night's stage mix estimated from its epochs' evidence, then every epoch's evidence
    reweighted by (night share / training share) ** power."""
    nights = load_features(feat)
    for ds, (use, w) in KINDS.items():
        sel = {k: v for k, v in nights.items() if v["dataset"] == ds}
        for prior, power in [(None, 0), (50, 0.2), (200, 0.2), (200, 1.0), (1000, 0.2), (1000, 1.0)]:
            out, wake = {}, {}
            for subject in sorted({v["subject"] for v in sel.values()}):
                m = fit([v for v in sel.values() if v["subject"] != subject], use, w)
                for k, v in sel.items():
                    if v["subject"] != subject:
                        continue
                    L = emissions(m, v["X"])
                    if prior is not None:
                        pi = night_shares(m, v["X"], prior)
                        L = L + power * np.log(pi / m["pi"])
                        wake[k] = pi[0]
                    p = forward_backward(m, L).argmax(1)
                    ok = v["y"] >= 0
                    out[k] = (v["y"][ok], p[ok])
            report(out, ("shipped" if prior is None else f"prior {prior}, power {power}") + f" / {ds}")
            if prior == 200 and power == 1.0:
                print("  estimated / true wake share:", " ".join(f"{k} {wake[k]:.2f}/{(r[0] == 0).mean():.2f}" for k, r in out.items()))


def viterbi(m, L):
    """The single likeliest stage path (instead of each epoch's likeliest stage)."""
    logT, n = np.log(m["T"]), len(L)
    d, back = np.log(m["pi"]) + L[0], np.zeros((n, 4), dtype=int)
    for i in range(1, n):
        s = d[:, None] + logT
        back[i] = s.argmax(0)
        d = s.max(0) + L[i]
    path = np.zeros(n, dtype=int)
    path[-1] = d.argmax()
    for i in range(n - 1, 0, -1):
        path[i - 1] = back[i, path[i]]
    return path


def expected_wake(post, scale=1.0):
    """As many awake epochs as the posteriors expect (scale x the sum of P(awake)), the likeliest
    ones; the others take their likeliest sleep stage."""
    n = int(round(scale * post[:, 0].sum()))
    p = post[:, 1:].argmax(1) + 1
    if n > 0:
        p[np.argsort(-post[:, 0], kind="stable")[:n]] = 0
    return p


def cmd_decoding(feat):
    """The stages read from the same posteriors in other ways: Viterbi, and the awake count the
    posteriors expect (the night's wake share from its own evidence, decided once per night)."""
    nights = load_features(feat)
    rules = [("argmax (shipped)", lambda m, L: forward_backward(m, L).argmax(1)),
             ("viterbi", viterbi)]
    rules += [(f"expected wake x{s}", (lambda s: lambda m, L: expected_wake(forward_backward(m, L), s))(s))
              for s in (0.8, 1.0, 1.2)]
    for ds, (use, w) in KINDS.items():
        sel = {k: v for k, v in nights.items() if v["dataset"] == ds}
        for label, rule in rules:
            out = {}
            for subject in sorted({v["subject"] for v in sel.values()}):
                m = fit([v for v in sel.values() if v["subject"] != subject], use, w)
                for k, v in sel.items():
                    if v["subject"] == subject:
                        p = rule(m, emissions(m, v["X"]))
                        ok = v["y"] >= 0
                        out[k] = (v["y"][ok], p[ok])
            report(out, f"{label} / {ds}")


def adapted_posteriors(m, X, prior, rounds=10):
    """Forward-backward after EM on the night's own stage means (covariance and transitions
    fixed): each stage's mean is the night's posterior-weighted mean, shrunk towards the
    fitted one by `prior` pseudo-epochs, as NightLearning does for breathing and movement."""
    m, Xu = copy.deepcopy(m), X[:, m["use"]]
    fitted = m["mu"].copy()
    for _ in range(rounds):
        post = forward_backward(m, emissions(m, X))
        for j in range(Xu.shape[1]):
            ok = ~np.isnan(Xu[:, j])
            m["mu"][:, j] = (post[ok].T @ Xu[ok, j] + prior * fitted[:, j]) / (post[ok].sum(0) + prior)
    return forward_backward(m, emissions(m, X))


def cmd_adapt(feat):
    """Every fitted feature's stage means learnt from the night itself (subject adaptation),
    read by the night's wake share as shipped."""
    nights = load_features(feat)
    for ds, (use, w) in KINDS.items():
        sel = {k: v for k, v in nights.items() if v["dataset"] == ds}
        for prior in (None, 20, 50, 200, 1000):
            out = {}
            for subject in sorted({v["subject"] for v in sel.values()}):
                m = fit([v for v in sel.values() if v["subject"] != subject], use, w)
                for k, v in sel.items():
                    if v["subject"] == subject:
                        post = (forward_backward(m, emissions(m, v["X"])) if prior is None
                                else adapted_posteriors(m, v["X"], prior))
                        ok = v["y"] >= 0
                        out[k] = (v["y"][ok], expected_wake(post)[ok])
            report(out, f"{'shipped' if prior is None else f'adapted, prior {prior}'} / {ds}")


def cmd_ensemble(feat):
    """Each night's posteriors from its kind's model and from the pooled model (fitted on both
    datasets, the held-out subject left out of both), combined epoch by epoch as a weighted
    geometric or arithmetic mean, then read by the night's wake share as shipped: does a second
    model, fitted on other people, steady the nights the kind's model misses?"""
    nights = load_features(feat)
    pooled_use, pooled_w = POOLED
    for ds, (use, w) in KINDS.items():
        sel = {k: v for k, v in nights.items() if v["dataset"] == ds}
        posts = {}
        for subject in sorted({v["subject"] for v in sel.values()}):
            kind = fit([v for v in sel.values() if v["subject"] != subject], use, w)
            pooled = fit([v for v in nights.values() if v["subject"] != subject], pooled_use, pooled_w)
            for k, v in sel.items():
                if v["subject"] == subject:
                    posts[k] = (forward_backward(kind, emissions(kind, v["X"])),
                                forward_backward(pooled, emissions(pooled, v["X"])))
        for how in ("geometric", "arithmetic"):
            for a in (1.0, 0.75, 0.5, 0.25, 0.0):
                if how == "arithmetic" and a in (1.0, 0.0):
                    continue
                out = {}
                for k, (pk, pp) in posts.items():
                    if how == "geometric":
                        post = np.exp(a * np.log(pk + 1e-12) + (1 - a) * np.log(pp + 1e-12))
                    else:
                        post = a * pk + (1 - a) * pp
                    post /= post.sum(1, keepdims=True)
                    ok = sel[k]["y"] >= 0
                    out[k] = (sel[k]["y"][ok], expected_wake(post)[ok])
                report(out, f"{how} {a:.2f} kind / {ds}")


if __name__ == "__main__":
    commands = {"loso": cmd_loso, "centring": cmd_centring, "spectral": cmd_spectral,
                "separation": cmd_separation, "lookalike": cmd_lookalike, "trend": cmd_trend, "nested": cmd_nested, "shares": cmd_shares,
                "decoding": cmd_decoding, "adapt": cmd_adapt, "ensemble": cmd_ensemble}
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
