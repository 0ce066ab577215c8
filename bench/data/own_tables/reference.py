"""Reference answers for dabench_own1.jsonl (ids 910001-910060), dabench_own2.jsonl (ids 910101-910160) and
dabench_own3.jsonl (ids 910201-910260), three sets of 60 DABench-form questions each on the DABench dev tables.

Run from the repository root:

    .venv/bin/python bench/data/own_tables/reference.py

It recomputes every answer from the tables, formats it as the question's format asks, compares it with the
`answers` stored in dabench_own1.jsonl, dabench_own2.jsonl and dabench_own3.jsonl and prints `ok` with the
counts of each set (exit 0) or the mismatches (exit 1).

Besides the plain recomputation it runs robustness checks:
  * ALT[id]: a second, independent computation (numpy / scipy / hand-written formulas, another solver) for
    most questions; its formatted answers must equal the primary ones;
  * every float answer must lie clearly away from a rounding boundary (at least 5% of a rounding unit), so
    that tiny numerical differences between libraries cannot flip the rounded string;
  * for "which group has the largest/smallest ..." answers the winner is checked to be unique.

Tables: /work/shared/eval/dabench/tables (the repository is /work/main; the path is derived from this file),
or the folder named by the environment variable DABENCH_TABLES.
"""
from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent
TABLES = Path(os.environ.get("DABENCH_TABLES")
              or Path(__file__).resolve().parents[3].parent / "shared/eval/dabench/tables")
JSONL = HERE / "dabench_own1.jsonl"
JSONL2 = HERE / "dabench_own2.jsonl"
JSONL3 = HERE / "dabench_own3.jsonl"
# (file, first id, last id) of each set that the script checks
SETS = [(JSONL, 910001, 910060), (JSONL2, 910101, 910160), (JSONL3, 910201, 910260)]

_cache: dict[str, pd.DataFrame] = {}


def load(name: str) -> pd.DataFrame:
    if name not in _cache:
        _cache[name] = pd.read_csv(TABLES / name)
    return _cache[name].copy()


# Each question function returns a list of (answer_name, raw_value, spec):
#   spec = int d  -> float rounded to d decimals, printed with d decimals
#   spec = "int"  -> integer
#   spec = "str"  -> string as is
def fmt(raw, spec) -> str:
    if spec == "str":
        return str(raw)
    if spec == "int":
        assert float(raw) == int(raw), raw
        return str(int(raw))
    return f"{float(raw):.{spec}f}"


UNIQUE_ERRORS: list[str] = []


def top(s: pd.Series, qid: int, largest: bool = True, rel_gap: float = 1e-6):
    """idxmax/idxmin with a check that the winner is unique (not a tie / near tie)."""
    s = s.dropna().sort_values(ascending=not largest)
    if len(s) > 1 and abs(s.iloc[0] - s.iloc[1]) <= rel_gap * max(1.0, abs(s.iloc[0])):
        UNIQUE_ERRORS.append(f"{qid}: tie for the top value: {s.index[0]!r} vs {s.index[1]!r}")
    return s.index[0], s.iloc[0]


def iqr_bounds(s: pd.Series):
    q1, q3 = s.quantile(0.25), s.quantile(0.75)
    i = q3 - q1
    return q1 - 1.5 * i, q3 + 1.5 * i


Q: dict = {}
ALT: dict = {}


def q(i):
    def deco(f):
        Q[i] = f
        return f
    return deco


def alt(i):
    def deco(f):
        ALT[i] = f
        return f
    return deco


# ---------------------------------------------------------------- titanic.csv
@q(910001)
def _():
    t = load("titanic.csv").dropna(subset=["Embarked"])
    rate = t.groupby("Embarked")["Survived"].mean()
    port, r = top(rate, 910001)
    return [("best_port", port, "str"), ("survival_rate", r, 4)]


@alt(910001)
def _():
    t = load("titanic.csv")
    best = None
    for port in ["C", "Q", "S"]:
        v = t.loc[t["Embarked"] == port, "Survived"].to_numpy()
        r = v.sum() / len(v)
        if best is None or r > best[1]:
            best = (port, r)
    return [("best_port", best[0], "str"), ("survival_rate", best[1], 4)]


@q(910002)
def _():
    t = load("titanic.csv")
    t["Deck"] = t["Cabin"].str[0]
    d = t.dropna(subset=["Cabin"])
    deck, n = top(d["Deck"].value_counts(), 910002)
    return [("deck_mean_fare", d.loc[d["Deck"] == deck, "Fare"].mean(), 2)]


@alt(910002)
def _():
    t = load("titanic.csv")
    counts, fares = {}, {}
    for cabin, fare in zip(t["Cabin"], t["Fare"]):
        if isinstance(cabin, str):
            counts[cabin[0]] = counts.get(cabin[0], 0) + 1
            fares.setdefault(cabin[0], []).append(fare)
    deck = max(counts, key=counts.get)
    return [("deck_mean_fare", float(np.mean(fares[deck])), 2)]


# ---------------------------------------------------------------- titanic_train.csv
def _titles(names: pd.Series) -> pd.Series:
    return names.str.extract(r",\s*([^.]*)\.")[0].str.strip()


@q(910003)
def _():
    t = load("titanic_train.csv")
    t["Title"] = _titles(t["Name"])
    med = t.groupby("Title")["Age"].median()
    age = t["Age"].fillna(t["Title"].map(med))
    assert age.isna().sum() == 0
    return [("mean_age", age.mean(), 2), ("under_18_count", int((age < 18).sum()), "int")]


@alt(910003)
def _():
    t = load("titanic_train.csv")
    titles = [n.split(",", 1)[1].split(".", 1)[0].strip() for n in t["Name"]]
    ages = t["Age"].to_numpy()
    by = {}
    for ti, a in zip(titles, ages):
        if not np.isnan(a):
            by.setdefault(ti, []).append(a)
    filled = np.array([a if not np.isnan(a) else np.median(by[ti]) for ti, a in zip(titles, ages)])
    return [("mean_age", filled.mean(), 2), ("under_18_count", int((filled < 18).sum()), "int")]


def _titanic_lr(solver):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    t = load("titanic_train.csv")
    X = t[["Pclass", "Sex", "SibSp", "Parch", "Fare"]].copy()
    X["Sex"] = (X["Sex"] == "male").astype(int)
    y = t["Survived"]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    m = LogisticRegression(max_iter=1000, solver=solver).fit(Xtr, ytr)
    margin = np.abs(m.decision_function(Xte)).min()
    return (m.predict(Xte) == yte).mean(), margin


@q(910004)
def _():
    acc, margin = _titanic_lr("lbfgs")
    if margin < 1e-3:
        UNIQUE_ERRORS.append(f"910004: a test point lies on the decision boundary ({margin})")
    return [("accuracy", acc, 4)]


@alt(910004)
def _():
    return [("accuracy", _titanic_lr("newton-cg")[0], 4)]


# ---------------------------------------------------------------- titanic_test.csv
@q(910005)
def _():
    t = load("titanic_test.csv")
    t["Fare"] = t["Fare"].fillna(t.groupby("Pclass")["Fare"].transform("median"))
    return [("mean_fare", t["Fare"].mean(), 2)]


@alt(910005)
def _():
    t = load("titanic_test.csv")
    fares = t["Fare"].to_numpy().copy()
    cls = t["Pclass"].to_numpy()
    for i in np.where(np.isnan(fares))[0]:
        fares[i] = np.nanmedian(t["Fare"].to_numpy()[cls == cls[i]])
    return [("mean_fare", fares.mean(), 2)]


# ---------------------------------------------------------------- abalone.csv
@q(910006)
def _():
    a = load("abalone.csv")
    sex, m = top(a.groupby("Sex")["Rings"].mean(), 910006)
    f = stats.f_oneway(*[g["Rings"] for _, g in a.groupby("Sex")]).statistic
    return [("f_statistic", f, 2)]


@alt(910006)
def _():
    a = load("abalone.csv")
    y = a["Rings"].to_numpy(float)
    groups = {s: y[a["Sex"].to_numpy() == s] for s in ["F", "I", "M"]}
    means = {s: g.mean() for s, g in groups.items()}
    gm = y.mean()
    ssb = sum(len(g) * (g.mean() - gm) ** 2 for g in groups.values())
    ssw = sum(((g - g.mean()) ** 2).sum() for g in groups.values())
    f = (ssb / 2) / (ssw / (len(y) - 3))
    s = max(means, key=means.get)
    return [("f_statistic", f, 2)]


@q(910007)
def _():
    r = load("abalone.csv")["Rings"]
    lo, hi = iqr_bounds(r)
    return [("outlier_count", int(((r < lo) | (r > hi)).sum()), "int")]


@alt(910007)
def _():
    r = load("abalone.csv")["Rings"].to_numpy(float)
    q1, q3 = np.percentile(r, [25, 75])
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    # also insensitive to the quantile method
    q1b, q3b = np.percentile(r, [25, 75], method="midpoint")
    assert (q1b, q3b) == (q1, q3)
    return [("outlier_count", int(((r < lo) | (r > hi)).sum()), "int")]


# (910008 is on 2015.csv; kept here in id order)
HAPPY_X = ["Economy (GDP per Capita)", "Family", "Health (Life Expectancy)", "Freedom",
           "Trust (Government Corruption)", "Generosity"]


@q(910008)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    from sklearn.model_selection import train_test_split
    h = load("2015.csv")
    Xtr, Xte, ytr, yte = train_test_split(h[HAPPY_X], h["Happiness Score"], test_size=0.25, random_state=7)
    return [("r2_score", r2_score(yte, LinearRegression().fit(Xtr, ytr).predict(Xte)), 4)]


@alt(910008)
def _():
    from sklearn.model_selection import train_test_split
    h = load("2015.csv")
    Xtr, Xte, ytr, yte = train_test_split(h[HAPPY_X], h["Happiness Score"], test_size=0.25, random_state=7)
    A = np.column_stack([np.ones(len(Xtr)), Xtr.to_numpy()])
    beta = np.linalg.lstsq(A, ytr.to_numpy(), rcond=None)[0]
    pred = np.column_stack([np.ones(len(Xte)), Xte.to_numpy()]) @ beta
    yt = yte.to_numpy()
    return [("r2_score", 1 - ((yt - pred) ** 2).sum() / ((yt - yt.mean()) ** 2).sum(), 4)]


# ---------------------------------------------------------------- auto-mpg.csv
@q(910009)
def _():
    m = load("auto-mpg.csv")
    return [("spearman_rho", m["horsepower"].corr(m["acceleration"], method="spearman"), 4)]


@alt(910009)
def _():
    m = load("auto-mpg.csv")
    return [("spearman_rho", stats.spearmanr(m["horsepower"], m["acceleration"]).statistic, 4)]


@q(910010)
def _():
    m = load("auto-mpg.csv")
    lo, hi = iqr_bounds(m["horsepower"])
    out = (m["horsepower"] < lo) | (m["horsepower"] > hi)
    return [("outlier_count", int(out.sum()), "int"), ("mean_mpg_clean", m.loc[~out, "mpg"].mean(), 2)]


@alt(910010)
def _():
    m = load("auto-mpg.csv")
    h = m["horsepower"].to_numpy()
    q1, q3 = np.percentile(h, [25, 75])
    keep = (h >= q1 - 1.5 * (q3 - q1)) & (h <= q3 + 1.5 * (q3 - q1))
    return [("outlier_count", int((~keep).sum()), "int"), ("mean_mpg_clean", m["mpg"].to_numpy()[keep].mean(), 2)]


# ---------------------------------------------------------------- insurance.csv
def _bmi_cat(b):
    return np.where(b < 18.5, "Underweight", np.where(b < 25, "Normal", np.where(b < 30, "Overweight", "Obese")))


@q(910011)
def _():
    d = load("insurance.csv")
    d["bmi_category"] = pd.cut(d["bmi"], [-np.inf, 18.5, 25, 30, np.inf], right=False,
                               labels=["Underweight", "Normal", "Overweight", "Obese"])
    ob = d[d["bmi_category"] == "Obese"]
    return [("obese_smoker_mean_charges", ob.loc[ob["smoker"] == "yes", "charges"].mean(), 2)]


@alt(910011)
def _():
    d = load("insurance.csv")
    cat = _bmi_cat(d["bmi"].to_numpy())
    ob = cat == "Obese"
    return [("obese_smoker_mean_charges", d["charges"].to_numpy()[ob & (d["smoker"] == "yes").to_numpy()].mean(), 2)]


def _ins_xy(drop_first):
    d = load("insurance.csv")
    X = pd.get_dummies(d[["age", "bmi", "children", "sex", "smoker", "region"]], drop_first=drop_first, dtype=float)
    return X, np.log(d["charges"])


@q(910012)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    from sklearn.model_selection import train_test_split
    X, y = _ins_xy(True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=42)
    return [("r2_score", r2_score(yte, LinearRegression().fit(Xtr, ytr).predict(Xte)), 4)]


@alt(910012)
def _():
    from sklearn.model_selection import train_test_split
    X, y = _ins_xy(False)  # full dummies: rank-deficient, min-norm lstsq gives the same predictions
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=42)
    A = np.column_stack([np.ones(len(Xtr)), Xtr.to_numpy()])
    beta = np.linalg.lstsq(A, ytr.to_numpy(), rcond=None)[0]
    pred = np.column_stack([np.ones(len(Xte)), Xte.to_numpy()]) @ beta
    yt = yte.to_numpy()
    return [("r2_score", 1 - ((yt - pred) ** 2).sum() / ((yt - yt.mean()) ** 2).sum(), 4)]


def _skew_cat(s):
    return "symmetric" if -0.5 <= s <= 0.5 else ("skewed_right" if s > 0.5 else "skewed_left")


def _skew_pop(x):
    x = np.asarray(x, float)
    d = x - x.mean()
    return (d ** 3).mean() / (d ** 2).mean() ** 1.5


def _kurt_pop(x):
    x = np.asarray(x, float)
    d = x - x.mean()
    return (d ** 4).mean() / (d ** 2).mean() ** 2 - 3


@q(910013)
def _():
    c = load("insurance.csv")["charges"]
    return [("skew_log_charges", stats.skew(np.log(c)), 4)]


@alt(910013)
def _():
    c = load("insurance.csv")["charges"].to_numpy()
    return [("skew_log_charges", _skew_pop(np.log(c)), 4)]


# ---------------------------------------------------------------- Credit.csv
@q(910014)
def _():
    b = load("Credit.csv")["Balance"]
    return [("balance_skewness", stats.skew(b), 4)]


@alt(910014)
def _():
    b = load("Credit.csv")["Balance"].to_numpy()
    return [("balance_skewness", _skew_pop(b), 4)]


@q(910015)
def _():
    c = load("Credit.csv")
    r = stats.ttest_ind(c.loc[c["Student"] == "Yes", "Balance"], c.loc[c["Student"] == "No", "Balance"],
                        equal_var=False)
    return [("t_statistic", r.statistic, 4), ("significant", "yes" if r.pvalue < 0.05 else "no", "str")]


@alt(910015)
def _():
    c = load("Credit.csv")
    a = c.loc[c["Student"] == "Yes", "Balance"].to_numpy(float)
    b = c.loc[c["Student"] == "No", "Balance"].to_numpy(float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    t = (a.mean() - b.mean()) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    p = 2 * stats.t.sf(abs(t), df)
    return [("t_statistic", t, 4), ("significant", "yes" if p < 0.05 else "no", "str")]


@q(910016)
def _():
    c = load("Credit.csv")
    z = stats.zscore(c["Income"])
    keep = np.abs(z) <= 3
    return [("outlier_count", int((~keep).sum()), "int"),
            ("pearson_r", c.loc[keep, "Income"].corr(c.loc[keep, "Balance"]), 4)]


@alt(910016)
def _():
    c = load("Credit.csv")
    x = c["Income"].to_numpy()
    z = (x - x.mean()) / x.std(ddof=0)
    z1 = (x - x.mean()) / x.std(ddof=1)
    assert ((np.abs(z) > 3) == (np.abs(z1) > 3)).all()  # ddof does not change the outlier set
    keep = np.abs(z) <= 3
    return [("outlier_count", int((~keep).sum()), "int"),
            ("pearson_r", np.corrcoef(x[keep], c["Balance"].to_numpy()[keep])[0, 1], 4)]


# ---------------------------------------------------------------- 2015.csv
@q(910017)
def _():
    h = load("2015.csv")
    m = h.groupby("Region")["Happiness Score"].mean()
    return [("happiest_region", top(m, 910017)[0], "str")]


@q(910018)
def _():
    s = load("2015.csv")["Happiness Score"]
    p = stats.normaltest(s).pvalue
    return [("p_value", p, 4), ("normality", "normal" if p > 0.05 else "not normal", "str")]


@alt(910018)
def _():
    s = load("2015.csv")["Happiness Score"].to_numpy()
    k2 = stats.skewtest(s).statistic ** 2 + stats.kurtosistest(s).statistic ** 2
    p = stats.chi2.sf(k2, 2)
    return [("p_value", p, 4), ("normality", "normal" if p > 0.05 else "not normal", "str")]


# ---------------------------------------------------------------- gapminder_cleaned.csv
@q(910019)
def _():
    g = load("gapminder_cleaned.csv")
    m = g[g["year"] == 2007].groupby("continent")["lifeexp"].mean()
    return [("highest_continent", top(m, 910019)[0], "str")]


@q(910020)
def _():
    g = load("gapminder_cleaned.csv")
    p = g.pivot(index="country", columns="year", values="lifeexp")
    ch = p[2007] - p[1952]
    c, v = top(ch, 910020)
    return [("country", c, "str"), ("increase", v, 2)]


@alt(910020)
def _():
    g = load("gapminder_cleaned.csv")
    a = g[g["year"] == 1952].set_index("country")["lifeexp"]
    b = g[g["year"] == 2007].set_index("country")["lifeexp"]
    ch = (b - a).to_dict()
    c = max(ch, key=ch.get)
    return [("country", c, "str"), ("increase", ch[c], 2)]


# ---------------------------------------------------------------- gapminder_gdp_asia.csv
@q(910021)
def _():
    g = load("gapminder_gdp_asia.csv").set_index("country")
    r = g["gdpPercap_2007"] / g["gdpPercap_1952"]
    return [("highest_growth_country", top(r, 910021)[0], "str")]


@q(910022)
def _():
    s = load("gapminder_gdp_asia.csv")["gdpPercap_2007"]
    r = stats.shapiro(s)
    return [("w_statistic", r.statistic, 4)]


# ---------------------------------------------------------------- baseball_data.csv
@q(910023)
def _():
    b = load("baseball_data.csv")
    return [("spearman_rho", b["number_of_home_runs"].corr(b["salary_in_thousands_of_dollars"], method="spearman"), 4)]


@alt(910023)
def _():
    b = load("baseball_data.csv").dropna(subset=["number_of_home_runs"])
    return [("spearman_rho", stats.spearmanr(b["number_of_home_runs"], b["salary_in_thousands_of_dollars"]).statistic, 4)]


@q(910024)
def _():
    b = load("baseball_data.csv").dropna()
    b["extra_base_hits"] = b["number_of_doubles"] + b["number_of_triples"] + b["number_of_home_runs"]
    return [("remaining_rows", len(b), "int"),
            ("pearson_r", b["extra_base_hits"].corr(b["salary_in_thousands_of_dollars"]), 4)]


@alt(910024)
def _():
    b = load("baseball_data.csv")
    keep = ~b.isna().any(axis=1).to_numpy()
    x = (b["number_of_doubles"] + b["number_of_triples"] + b["number_of_home_runs"]).to_numpy()[keep]
    y = b["salary_in_thousands_of_dollars"].to_numpy()[keep]
    return [("remaining_rows", int(keep.sum()), "int"), ("pearson_r", stats.pearsonr(x, y).statistic, 4)]


# ---------------------------------------------------------------- beauty and the labor market.csv
@q(910025)
def _():
    b = load("beauty and the labor market.csv")
    r = stats.kruskal(*[g["wage"] for _, g in b.groupby("looks")])
    return [("kruskal_statistic", r.statistic, 2),
            ("significant", "yes" if r.pvalue < 0.05 else "no", "str")]


@q(910026)
def _():
    b = load("beauty and the labor market.csv")
    r = stats.ttest_ind(b.loc[b["union"] == 1, "lwage"], b.loc[b["union"] == 0, "lwage"], equal_var=False)
    return [("t_statistic", r.statistic, 4)]


@alt(910026)
def _():
    b = load("beauty and the labor market.csv")
    x = b.loc[b["union"] == 1, "lwage"].to_numpy()
    y = b.loc[b["union"] == 0, "lwage"].to_numpy()
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    t = (x.mean() - y.mean()) / math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1))
    return [("t_statistic", t, 4)]


# ---------------------------------------------------------------- country_vaccinations.csv
@q(910027)
def _():
    v = load("country_vaccinations.csv")
    d = v.dropna(subset=["people_fully_vaccinated_per_hundred"])
    d = d.sort_values("date").groupby("country").tail(1).set_index("country")["people_fully_vaccinated_per_hundred"]
    c, val = top(d, 910027)
    return [("top_country", c, "str"), ("top_value", val, 2)]


@alt(910027)
def _():
    v = load("country_vaccinations.csv")
    last = {}
    for c, dt, x in zip(v["country"], v["date"], v["people_fully_vaccinated_per_hundred"]):
        if not np.isnan(x) and (c not in last or dt > last[c][0]):
            last[c] = (dt, x)
    c = max(last, key=lambda k: last[k][1])
    return [("top_country", c, "str"), ("top_value", last[c][1], 2)]


# ---------------------------------------------------------------- election2016.csv
@q(910028)
def _():
    e = load("election2016.csv")
    return [("dem_win_count", int((e["votes_dem"] > e["votes_gop"]).sum()), "int")]


@alt(910028)
def _():
    e = load("election2016.csv")
    return [("dem_win_count", int((e["per_dem"] > e["per_gop"]).sum()), "int")]


@q(910029)
def _():
    e = load("election2016.csv")
    p = e["per_point_diff"].str.rstrip("%").astype(float)
    return [("median_point_diff", p.median(), 2)]


@alt(910029)
def _():
    e = load("election2016.csv")
    p = np.array([float(s.replace("%", "")) for s in e["per_point_diff"]])
    # the column agrees with |per_gop - per_dem| * 100 (sanity check of the reading)
    assert np.allclose(p, (e["per_gop"] - e["per_dem"]).abs() * 100, atol=0.006)
    return [("median_point_diff", float(np.median(p)), 2)]


@q(910030)
def _():
    s = stats.skew(np.log10(load("election2016.csv")["total_votes"]))
    return [("skewness", s, 4), ("distribution_skew", _skew_cat(s), "str")]


@alt(910030)
def _():
    s = _skew_pop(np.log10(load("election2016.csv")["total_votes"].to_numpy()))
    return [("skewness", s, 4), ("distribution_skew", _skew_cat(s), "str")]


# ---------------------------------------------------------------- estimated_numbers.csv
@q(910031)
def _():
    e = load("estimated_numbers.csv")
    e = e[e["Year"] == 2017]
    g = e.groupby("WHO Region")[["No. of cases_median", "No. of deaths_median"]].sum()
    g = g[g["No. of cases_median"] > 0]
    rate = 1000 * g["No. of deaths_median"] / g["No. of cases_median"]
    reg, rv = top(rate, 910031)
    a = e[(e["WHO Region"] == reg) & (e["No. of cases_median"] > 0)].set_index("Country")
    cr = 1000 * a["No. of deaths_median"] / a["No. of cases_median"]
    c, _v = top(cr, 910031)
    return [("region", reg, "str"), ("country", c, "str")]


# ---------------------------------------------------------------- hotel_data.csv
@q(910032)
def _():
    h = load("hotel_data.csv")
    t, n = top(h["hotel_type"].value_counts(), 910032)
    return [("most_common_type", t, "str")]


@q(910033)
def _():
    h = load("hotel_data.csv")
    h["bubble_score"] = h["bubble_score"].fillna(h.groupby("city_name")["bubble_score"].transform("median"))
    branded = h["brand_name"].notna()
    return [("mean_bubble_score", h["bubble_score"].mean(), 2),
            ("mean_bubble_branded", h.loc[branded, "bubble_score"].mean(), 2)]


@alt(910033)
def _():
    h = load("hotel_data.csv")
    b = h["bubble_score"].to_numpy().copy()
    city = h["city_name"].to_numpy()
    meds = {c: np.nanmedian(b[city == c]) for c in set(city)}
    b = np.array([meds[c] if np.isnan(x) else x for c, x in zip(city, b)])
    br = h["brand_name"].notna().to_numpy()
    return [("mean_bubble_score", b.mean(), 2), ("mean_bubble_branded", b[br].mean(), 2)]


# ---------------------------------------------------------------- tree.csv
@q(910034)
def _():
    t = load("tree.csv")
    return [("pearson_r", t["CON"].corr(t["HT_M"]), 4)]


@alt(910034)
def _():
    t = load("tree.csv")
    return [("pearson_r", stats.pointbiserialr(t["CON"], t["HT_M"]).statistic, 4)]


@q(910035)
def _():
    t = load("tree.csv")
    sp, _n = top(t["SCIENTIFIC_NAME"].value_counts(), 910035)
    d = t[t["SCIENTIFIC_NAME"] == sp]
    assert (d["DBH_CM"] > 0).all() and (d["HT_M"] > 0).all()
    return [("pearson_r", np.log(d["DBH_CM"]).corr(np.log(d["HT_M"])), 4)]


@alt(910035)
def _():
    t = load("tree.csv")
    d = t[t["SPP_SYMBOL"] == t["SPP_SYMBOL"].mode()[0]]
    assert d["SCIENTIFIC_NAME"].iloc[0] == "Pseudotsuga menziesii"
    return [("pearson_r", np.corrcoef(np.log(d["DBH_CM"]), np.log(d["HT_M"]))[0, 1], 4)]


# ---------------------------------------------------------------- weather_train.csv
@q(910036)
def _():
    p = load("weather_train.csv")["air pressure"].dropna()
    z = stats.zscore(p)
    return [("outlier_count", int((np.abs(z) > 3).sum()), "int")]


@alt(910036)
def _():
    p = load("weather_train.csv")["air pressure"].to_numpy()
    p = p[~np.isnan(p)]
    z0 = np.abs(p - p.mean()) / p.std(ddof=0)
    z1 = np.abs(p - p.mean()) / p.std(ddof=1)
    assert ((z0 > 3) == (z1 > 3)).all()
    return [("outlier_count", int((z0 > 3).sum()), "int")]


@q(910037)
def _():
    w = load("weather_train.csv")
    w["date"] = pd.to_datetime(w["time"]).dt.strftime("%Y-%m-%d")
    daily = w.groupby("date")["temperature"].mean().dropna()
    d, v = top(daily, 910037)
    p = stats.shapiro(daily).pvalue
    return [("hottest_day", d, "str"), ("hottest_day_mean", v, 2),
            ("normality", "normal" if p > 0.05 else "not normal", "str")]


@alt(910037)
def _():
    w = load("weather_train.csv")
    day = w["time"].str[:10]
    sums, cnts = {}, {}
    for d, x in zip(day, w["temperature"]):
        if not np.isnan(x):
            sums[d] = sums.get(d, 0.0) + x
            cnts[d] = cnts.get(d, 0) + 1
    means = {d: sums[d] / cnts[d] for d in sums}
    d = max(means, key=means.get)
    p = stats.shapiro(np.array([means[k] for k in sorted(means)])).pvalue
    return [("hottest_day", d, "str"), ("hottest_day_mean", means[d], 2),
            ("normality", "normal" if p > 0.05 else "not normal", "str")]


# ---------------------------------------------------------------- microsoft.csv
@q(910038)
def _():
    r = stats.shapiro(load("microsoft.csv")["Volume"])
    return [("w_statistic", r.statistic, 4)]


@q(910039)
def _():
    m = load("microsoft.csv")
    m["weekday"] = pd.to_datetime(m["Date"], format="%d-%b-%y").dt.day_name()
    d, v = top(m.groupby("weekday")["Volume"].mean(), 910039)
    return [("weekday", d, "str")]


@alt(910039)
def _():
    import datetime as dt
    m = load("microsoft.csv")
    sums, cnts = {}, {}
    for s, v in zip(m["Date"], m["Volume"]):
        wd = dt.datetime.strptime(s, "%d-%b-%y").strftime("%A")
        sums[wd] = sums.get(wd, 0) + v
        cnts[wd] = cnts.get(wd, 0) + 1
    means = {k: sums[k] / cnts[k] for k in sums}
    k = max(means, key=means.get)
    return [("weekday", k, "str")]


# ---------------------------------------------------------------- fb_articles_20180822_20180829_df.csv
@q(910040)
def _():
    f = load("fb_articles_20180822_20180829_df.csv")
    m = f.groupby("source")["compound"].mean()
    return [("highest_source", top(m, 910040)[0], "str")]


# ---------------------------------------------------------------- arrest_expungibility.csv
@q(910041)
def _():
    a = load("arrest_expungibility.csv")
    r = stats.chi2_contingency(pd.crosstab(a["Category"], a["Expungible"]))
    return [("chi2_statistic", r.statistic, 2), ("dependent", "yes" if r.pvalue < 0.05 else "no", "str")]


@alt(910041)
def _():
    a = load("arrest_expungibility.csv")
    obs = pd.crosstab(a["Category"], a["Expungible"]).to_numpy(float)
    exp = obs.sum(1, keepdims=True) * obs.sum(0, keepdims=True) / obs.sum()
    chi2 = ((obs - exp) ** 2 / exp).sum()
    dof = (obs.shape[0] - 1) * (obs.shape[1] - 1)
    return [("chi2_statistic", chi2, 2),
            ("dependent", "yes" if stats.chi2.sf(chi2, dof) < 0.05 else "no", "str")]


# ---------------------------------------------------------------- oecd_education_spending.csv
@q(910042)
def _():
    o = load("oecd_education_spending.csv")
    m = o.groupby(["TIME", "SUBJECT"])["Value"].mean()
    return [("mean_pry_ntry_2013", m[(2013, "PRY_NTRY")], 2), ("mean_try_2013", m[(2013, "TRY")], 2)]


@alt(910042)
def _():
    o = load("oecd_education_spending.csv")
    out = []
    for sub in ["PRY_NTRY", "TRY"]:
        v = o.loc[(o["TIME"] == 2013) & (o["SUBJECT"] == sub), "Value"].to_numpy()
        out.append((f"mean_{sub.lower()}_2013", np.nanmean(v), 2))
    return out


# ---------------------------------------------------------------- imp.score.ldlr.metabolome.csv
@q(910043)
def _():
    s = load("imp.score.ldlr.metabolome.csv")["importance.score"]
    lo, hi = iqr_bounds(s)
    return [("outlier_count", int(((s < lo) | (s > hi)).sum()), "int"), ("upper_bound", hi, 6)]


@alt(910043)
def _():
    s = load("imp.score.ldlr.metabolome.csv")["importance.score"].to_numpy()
    q1, q3 = np.percentile(s, [25, 75])
    hi = q3 + 1.5 * (q3 - q1)
    return [("outlier_count", int(((s < q1 - 1.5 * (q3 - q1)) | (s > hi)).sum()), "int"), ("upper_bound", hi, 6)]


# ---------------------------------------------------------------- baro_2015.csv
@q(910044)
def _():
    b = load("baro_2015.csv")
    return [("pearson_r", b[" WINDSPEED"].corr(b[" GUSTS"]), 4)]


@alt(910044)
def _():
    b = load("baro_2015.csv").dropna(subset=[" WINDSPEED", " GUSTS"])
    return [("pearson_r", stats.pearsonr(b[" WINDSPEED"], b[" GUSTS"]).statistic, 4)]


@q(910045)
def _():
    b = load("baro_2015.csv")
    b["date"] = pd.to_datetime(b["DATE TIME"], format="%m/%d/%Y %H:%M").dt.date
    d = b.groupby("date")[[" AT", " BARO"]].mean().dropna()
    return [("pearson_r", d[" AT"].corr(d[" BARO"]), 4)]


@alt(910045)
def _():
    b = load("baro_2015.csv")
    day = b["DATE TIME"].str[:10]
    at = b.groupby(day)[" AT"].apply(lambda s: np.nanmean(s) if s.notna().any() else np.nan)
    ba = b.groupby(day)[" BARO"].apply(lambda s: np.nanmean(s) if s.notna().any() else np.nan)
    ok = at.notna() & ba.notna()
    return [("pearson_r", np.corrcoef(at[ok], ba[ok])[0, 1], 4)]


# ---------------------------------------------------------------- percent-bachelors-degrees-women-usa.csv
@q(910046)
def _():
    p = load("percent-bachelors-degrees-women-usa.csv")
    return [("pearson_r", p["Computer Science"].corr(p["Engineering"]), 4)]


@alt(910046)
def _():
    p = load("percent-bachelors-degrees-women-usa.csv")
    return [("pearson_r", np.corrcoef(p["Computer Science"], p["Engineering"])[0, 1], 4)]


@q(910047)
def _():
    p = load("percent-bachelors-degrees-women-usa.csv")
    r = p.drop(columns="Year").corrwith(p["Year"])
    return [("most_positive_field", top(r, 910047)[0], "str"),
            ("most_negative_field", top(r, 910047, largest=False)[0], "str")]


@alt(910047)
def _():
    p = load("percent-bachelors-degrees-women-usa.csv")
    yr = p["Year"].to_numpy(float)
    r = {c: np.corrcoef(yr, p[c].to_numpy())[0, 1] for c in p.columns if c != "Year"}
    hi, lo = max(r, key=r.get), min(r, key=r.get)
    return [("most_positive_field", hi, "str"), ("most_negative_field", lo, "str")]


# ---------------------------------------------------------------- my_test_01.csv
@q(910048)
def _():
    m = load("my_test_01.csv")
    return [("spearman_rho", m["MedInc"].corr(m["AveRooms"], method="spearman"), 4)]


@alt(910048)
def _():
    m = load("my_test_01.csv")
    return [("spearman_rho", stats.spearmanr(m["MedInc"], m["AveRooms"]).statistic, 4)]


# ---------------------------------------------------------------- 3901.csv
@q(910049)
def _():
    return [("skewness", stats.skew(load("3901.csv")["R_VALUE"]), 4)]


@alt(910049)
def _():
    return [("skewness", _skew_pop(load("3901.csv")["R_VALUE"].to_numpy()), 4)]


@q(910050)
def _():
    d = load("3901.csv")
    x = pd.to_numeric(d["MEANSHR"], errors="coerce")
    n_bad = int(x.isna().sum())
    x = x.fillna(x.median())
    return [("non_numeric_count", n_bad, "int"), ("pearson_r", x.corr(d["SHRGT45"]), 3)]


@alt(910050)
def _():
    d = load("3901.csv")
    vals = []
    for s in d["MEANSHR"]:
        try:
            vals.append(float(s))
        except ValueError:
            vals.append(np.nan)
    x = np.array(vals)
    med = np.nanmedian(x)
    bad = np.isnan(x)
    x[bad] = med
    return [("non_numeric_count", int(bad.sum()), "int"), ("pearson_r", np.corrcoef(x, d["SHRGT45"].to_numpy())[0, 1], 3)]


# ---------------------------------------------------------------- ferret-Pitt-2-preinf-lib2-100_sitediffsel.csv
@q(910051)
def _():
    r = stats.shapiro(load("ferret-Pitt-2-preinf-lib2-100_sitediffsel.csv")["positive_diffsel"])
    return [("w_statistic", r.statistic, 4)]


# ---------------------------------------------------------------- 20170413_000000_group_statistics.csv
@q(910052)
def _():
    g = load("20170413_000000_group_statistics.csv")
    sec = pd.to_timedelta(g["avg. wait time "]).dt.total_seconds()
    ans = g["num. calls answered"]
    busy = ans > 0
    return [("mean_wait_seconds", sec[busy].mean(), 2),
            ("weighted_mean_wait_seconds", (sec * ans).sum() / ans.sum(), 2)]


@alt(910052)
def _():
    g = load("20170413_000000_group_statistics.csv")
    sec = np.array([int(h) * 3600 + int(m) * 60 + int(s)
                    for h, m, s in (t.split(":") for t in g["avg. wait time "])], float)
    ans = g["num. calls answered"].to_numpy()
    busy = ans > 0
    return [("mean_wait_seconds", sec[busy].mean(), 2),
            ("weighted_mean_wait_seconds", np.average(sec, weights=ans), 2)]


# ---------------------------------------------------------------- cost_data_with_errors.csv
@q(910053)
def _():
    c = load("cost_data_with_errors.csv").dropna(subset=["max_sust_wind", "min_p"])
    return [("spearman_rho", c["max_sust_wind"].corr(c["min_p"], method="spearman"), 4)]


@alt(910053)
def _():
    c = load("cost_data_with_errors.csv")
    ok = c["max_sust_wind"].notna() & c["min_p"].notna()
    return [("spearman_rho", stats.spearmanr(c.loc[ok, "max_sust_wind"], c.loc[ok, "min_p"]).statistic, 4)]


# ---------------------------------------------------------------- well_2_complete.csv
@q(910054)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    from sklearn.model_selection import train_test_split
    w = load("well_2_complete.csv")
    Xtr, Xte, ytr, yte = train_test_split(w[["VP", "NPHI", "GR"]], w["VS"], test_size=0.3, random_state=0)
    return [("r2_score", r2_score(yte, LinearRegression().fit(Xtr, ytr).predict(Xte)), 3)]


@alt(910054)
def _():
    from sklearn.model_selection import train_test_split
    w = load("well_2_complete.csv")
    Xtr, Xte, ytr, yte = train_test_split(w[["VP", "NPHI", "GR"]], w["VS"], test_size=0.3, random_state=0)
    A = np.column_stack([np.ones(len(Xtr)), Xtr.to_numpy()])
    beta = np.linalg.lstsq(A, ytr.to_numpy(), rcond=None)[0]
    pred = np.column_stack([np.ones(len(Xte)), Xte.to_numpy()]) @ beta
    yt = yte.to_numpy()
    return [("r2_score", 1 - ((yt - pred) ** 2).sum() / ((yt - yt.mean()) ** 2).sum(), 3)]


# ---------------------------------------------------------------- tr_eikon_eod_data.csv
@q(910055)
def _():
    t = load("tr_eikon_eod_data.csv").dropna(subset=["GLD", "GDX"])
    r = t[["GLD", "GDX"]].pct_change().dropna()
    return [("pearson_r", r["GLD"].corr(r["GDX"]), 3)]


@alt(910055)
def _():
    t = load("tr_eikon_eod_data.csv")
    ok = t["GLD"].notna() & t["GDX"].notna()
    a, b = t.loc[ok, "GLD"].to_numpy(), t.loc[ok, "GDX"].to_numpy()
    return [("pearson_r", np.corrcoef(a[1:] / a[:-1] - 1, b[1:] / b[:-1] - 1)[0, 1], 3)]


# ---------------------------------------------------------------- GODREJIND.csv
@q(910056)
def _():
    g = load("GODREJIND.csv")
    return [("spearman_rho", g["% Dly Qt to Traded Qty"].corr(g["Total Traded Quantity"], method="spearman"), 4)]


@alt(910056)
def _():
    g = load("GODREJIND.csv")
    return [("spearman_rho", stats.spearmanr(g["% Dly Qt to Traded Qty"], g["Total Traded Quantity"]).statistic, 4)]


# ---------------------------------------------------------------- e5_aapl.csv
@q(910057)
def _():
    a = load("e5_aapl.csv")
    a["Return"] = a["Close"].pct_change()
    r = a.dropna(subset=["Return"])
    z = stats.zscore(r["Return"])
    d, _v = top(r.set_index("Date")["Return"], 910057, largest=False)
    return [("outlier_count", int((np.abs(z) > 3).sum()), "int"), ("worst_day", d, "str")]


@alt(910057)
def _():
    a = load("e5_aapl.csv")
    c = a["Close"].to_numpy()
    ret = c[1:] / c[:-1] - 1
    z0 = np.abs(ret - ret.mean()) / ret.std(ddof=0)
    z1 = np.abs(ret - ret.mean()) / ret.std(ddof=1)
    assert ((z0 > 3) == (z1 > 3)).all()
    return [("outlier_count", int((z0 > 3).sum()), "int"), ("worst_day", a["Date"].iloc[1 + int(ret.argmin())], "str")]


# ---------------------------------------------------------------- test_Y3wMUE5_7gLdaTN.csv
@q(910058)
def _():
    s = load("test_Y3wMUE5_7gLdaTN.csv")["ApplicantIncome"]
    lo, hi = iqr_bounds(s)
    return [("outlier_count", int(((s < lo) | (s > hi)).sum()), "int")]


@alt(910058)
def _():
    s = load("test_Y3wMUE5_7gLdaTN.csv")["ApplicantIncome"].to_numpy(float)
    q1, q3 = np.percentile(s, [25, 75])
    hi = q3 + 1.5 * (q3 - q1)
    return [("outlier_count", int(((s < q1 - 1.5 * (q3 - q1)) | (s > hi)).sum()), "int")]


# ---------------------------------------------------------------- YAHOO-BTC_USD_D.csv
@q(910059)
def _():
    y = load("YAHOO-BTC_USD_D.csv").dropna(subset=["Close"])
    r = np.log(y["Close"] / y["Close"].shift(1)).dropna()
    d, _v = top(pd.Series(r.to_numpy(), index=y["Date"].iloc[1:].to_numpy()), 910059)
    return [("skewness", stats.skew(r), 4), ("excess_kurtosis", stats.kurtosis(r), 4), ("best_day", d, "str")]


@alt(910059)
def _():
    y = load("YAHOO-BTC_USD_D.csv")
    ok = y["Close"].notna().to_numpy()
    c = y["Close"].to_numpy()[ok]
    dates = y["Date"].to_numpy()[ok]
    r = np.diff(np.log(c))
    return [("skewness", _skew_pop(r), 4), ("excess_kurtosis", _kurt_pop(r), 4), ("best_day", dates[1 + r.argmax()], "str")]


# ---------------------------------------------------------------- veracruz 2016.csv
@q(910060)
def _():
    s = load("veracruz 2016.csv")["LarInd"]
    lo, hi = iqr_bounds(s)
    out = (s < lo) | (s > hi)
    return [("outlier_count", int(out.sum()), "int"), ("skew_before", stats.skew(s), 4),
            ("skew_after", stats.skew(s[~out]), 4)]


@alt(910060)
def _():
    s = load("veracruz 2016.csv")["LarInd"].to_numpy()
    q1, q3 = np.percentile(s, [25, 75])
    keep = (s >= q1 - 1.5 * (q3 - q1)) & (s <= q3 + 1.5 * (q3 - q1))
    return [("outlier_count", int((~keep).sum()), "int"), ("skew_before", _skew_pop(s), 4),
            ("skew_after", _skew_pop(s[keep]), 4)]


# ================================================================ own2 (dabench_own2.jsonl, 910101 ... 910160)
# Helpers for the independent recomputations of own2: hand-written versions of the tests and statistics.
def _h_pearson(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    da, db = a - a.mean(), b - b.mean()
    return (da * db).sum() / math.sqrt((da ** 2).sum() * (db ** 2).sum())


def _h_ranks(x):
    """Average ranks (1-based), ties get the mean of their positions."""
    x = np.asarray(x, float)
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    xs = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def _h_spearman(a, b):
    return _h_pearson(_h_ranks(a), _h_ranks(b))


def _h_mwu(x, y):
    """Mann-Whitney U of the first sample, two-sided p from the normal approximation with tie and continuity
    correction (what scipy.stats.mannwhitneyu does with method='asymptotic')."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n1, n2 = len(x), len(y)
    r = _h_ranks(np.concatenate([x, y]))
    u1 = r[:n1].sum() - n1 * (n1 + 1) / 2
    n = n1 + n2
    _, t = np.unique(np.concatenate([x, y]), return_counts=True)
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - (t ** 3 - t).sum() / (n * (n - 1))))
    u = max(u1, n1 * n2 - u1)
    z = (u - n1 * n2 / 2 - 0.5) / sigma
    return u1, 2 * stats.norm.sf(z)


def _h_kruskal(groups):
    groups = [np.asarray(g, float) for g in groups]
    allv = np.concatenate(groups)
    n = len(allv)
    r = _h_ranks(allv)
    h, pos = 0.0, 0
    for g in groups:
        h += r[pos:pos + len(g)].sum() ** 2 / len(g)
        pos += len(g)
    h = 12 / (n * (n + 1)) * h - 3 * (n + 1)
    _, t = np.unique(allv, return_counts=True)
    return h / (1 - (t ** 3 - t).sum() / (n ** 3 - n))


def _h_chi2(table, yates=True):
    o = np.asarray(table, float)
    e = o.sum(1, keepdims=True) * o.sum(0, keepdims=True) / o.sum()
    d = np.abs(o - e)
    if yates and o.shape == (2, 2):
        d = np.maximum(d - 0.5, 0)
    return (d ** 2 / e).sum()


def _h_zcount(x):
    """Number of |Z| > 3 values; asserts that ddof 0 and 1 give the same set."""
    x = np.asarray(x, float)
    z0 = np.abs(x - x.mean()) / x.std(ddof=0)
    z1 = np.abs(x - x.mean()) / x.std(ddof=1)
    assert ((z0 > 3) == (z1 > 3)).all()
    return int((z0 > 3).sum())


def _h_iqr_mask(x):
    """True for the values inside [Q1 - 1.5 IQR, Q3 + 1.5 IQR] (numpy's default linear percentiles)."""
    x = np.asarray(x, float)
    q1, q3 = np.percentile(x, [25, 75])
    return (x >= q1 - 1.5 * (q3 - q1)) & (x <= q3 + 1.5 * (q3 - q1))


def _h_r2(y, pred):
    y, pred = np.asarray(y, float), np.asarray(pred, float)
    return 1 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum()


def _h_ols(Xtr, ytr, Xte):
    A = np.column_stack([np.ones(len(Xtr)), np.asarray(Xtr, float)])
    beta = np.linalg.lstsq(A, np.asarray(ytr, float), rcond=None)[0]
    return np.column_stack([np.ones(len(Xte)), np.asarray(Xte, float)]) @ beta, beta


# ---------------------------------------------------------------- 0020200722.csv (own2)
@q(910101)
def _():
    g = load("0020200722.csv")
    vc = g["EVENTMSGTYPE"].value_counts()
    return [("fg_percentage", 100 * vc[1] / (vc[1] + vc[2]), 2)]


@alt(910101)
def _():
    t = load("0020200722.csv")["EVENTMSGTYPE"].to_numpy()
    return [("fg_percentage", 100 * (t == 1).sum() / ((t == 1).sum() + (t == 2).sum()), 2)]


@q(910102)
def _():
    g = load("0020200722.csv").dropna(subset=["SCORE"])
    parts = g["SCORE"].str.split(" - ", expand=True).astype(int)
    margin = (parts[0] - parts[1]).abs()
    first = margin.idxmax()  # first row (in file order) with the maximum
    return [("largest_margin", int(margin.max()), "int"), ("period", int(g.loc[first, "PERIOD"]), "int")]


@alt(910102)
def _():
    import re
    g = load("0020200722.csv")
    best = (-1, None)
    for score, period in zip(g["SCORE"], g["PERIOD"]):
        if isinstance(score, str):
            a, b = map(int, re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", score).groups())
            if abs(a - b) > best[0]:
                best = (abs(a - b), period)
    return [("largest_margin", best[0], "int"), ("period", int(best[1]), "int")]


# ---------------------------------------------------------------- 2014_q4.csv (own2)
P24 = "24-Hour Passes Purchased (midnight to 11:59 pm)"
TRIPS = "Trips over the past 24-hours (midnight to 11:59pm)"


@q(910103)
def _():
    b = load("2014_q4.csv")
    x = pd.to_numeric(b[P24], errors="coerce")
    v = x.dropna()
    z = (v - v.mean()) / v.std(ddof=0)
    return [("invalid_count", int(x.isna().sum()), "int"), ("outlier_count", int((z.abs() > 3).sum()), "int")]


@alt(910103)
def _():
    b = load("2014_q4.csv")
    vals = [s.strip() for s in b[P24].astype(str)]
    ok = [float(s) for s in vals if s.isdigit()]
    return [("invalid_count", len(vals) - len(ok), "int"), ("outlier_count", _h_zcount(ok), "int")]


@q(910104)
def _():
    b = load("2014_q4.csv")
    b["weekday"] = pd.to_datetime(b["Date"], format="%m/%d/%Y").dt.day_name()
    day, m = top(b.groupby("weekday")[TRIPS].mean(), 910104)
    return [("busiest_weekday", day, "str"), ("mean_trips", m, 2)]


@alt(910104)
def _():
    import datetime as dt
    b = load("2014_q4.csv")
    names = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    acc = {}
    for d, t in zip(b["Date"], b[TRIPS]):
        mo, da, yr = map(int, d.split("/"))
        acc.setdefault(names[dt.date(yr, mo, da).weekday()], []).append(t)
    day = max(acc, key=lambda k: np.mean(acc[k]))
    return [("busiest_weekday", day, "str"), ("mean_trips", float(np.mean(acc[day])), 2)]


def _bike_weekend():
    b = load("2014_q4.csv")
    wd = pd.to_datetime(b["Date"], format="%m/%d/%Y").dt.day_of_week
    return b.loc[wd >= 5, TRIPS].to_numpy(float), b.loc[wd < 5, TRIPS].to_numpy(float)


@q(910105)
def _():
    we, wk = _bike_weekend()
    res = stats.mannwhitneyu(we, wk)
    return [("p_value", res.pvalue, 4)]


@alt(910105)
def _():
    we, wk = _bike_weekend()
    u, p = _h_mwu(we, wk)
    assert stats.mannwhitneyu(we, wk, method="asymptotic").pvalue == stats.mannwhitneyu(we, wk).pvalue
    assert abs(stats.mannwhitneyu(wk, we).pvalue - p) < 1e-12  # the order of the samples does not matter
    return [("p_value", p, 4)]


# ---------------------------------------------------------------- Current_Logan.csv (own2)
@q(910106)
def _():
    c = pd.read_csv(TABLES / "Current_Logan.csv", header=1)
    c["Wins"] = pd.to_numeric(c["Wins"])
    school, _n = top(c["School"].value_counts(), 910106)
    return [("top_school", school, "str"), ("mean_wins", c.loc[c["School"] == school, "Wins"].mean(), 2)]


@alt(910106)
def _():
    c = load("Current_Logan.csv")
    assert c.iloc[0]["JAMES LOGAN"] == "Wins" and c.iloc[0]["Unnamed: 3"] == "School"
    rows = c.iloc[1:]
    cnt = {}
    for s in rows["Unnamed: 3"]:
        cnt[s] = cnt.get(s, 0) + 1
    school = max(cnt, key=cnt.get)
    wins = [int(w) for w, s in zip(rows["JAMES LOGAN"], rows["Unnamed: 3"]) if s == school]
    return [("top_school", school, "str"), ("mean_wins", sum(wins) / len(wins), 2)]


# ---------------------------------------------------------------- DES=+2006261.csv (own2)
AU_KM = 149597870.7


@q(910107)
def _():
    d = load("DES=+2006261.csv")
    r = np.sqrt(d["X"] ** 2 + d["Y"] ** 2 + d["Z"] ** 2) / AU_KM
    first = (r > 3).idxmax()
    assert (r > 3).any()
    date = pd.to_datetime(d.loc[first, "Calendar Date (TDB)"].strip()[5:16], format="%Y-%b-%d")
    return [("mean_distance_au", r.mean(), 4), ("first_date_over_3_au", date.strftime("%Y-%m-%d"), "str")]


@alt(910107)
def _():
    import datetime as dt
    d = load("DES=+2006261.csv")
    xyz = d[["X", "Y", "Z"]].to_numpy()
    r = np.linalg.norm(xyz, axis=1) / AU_KM
    i = int(np.nonzero(r > 3)[0][0])
    s = d["Calendar Date (TDB)"].iloc[i].split()[1]  # e.g. '1999-Dec-21'
    date = dt.datetime.strptime(s, "%Y-%b-%d").date().isoformat()
    return [("mean_distance_au", r.mean(), 4), ("first_date_over_3_au", date, "str")]


@q(910108)
def _():
    d = load("DES=+2006261.csv")
    return [("correlation_yz", d["Y"].corr(d["Z"]), 4)]


@alt(910108)
def _():
    d = load("DES=+2006261.csv")
    return [("correlation_yz", _h_pearson(d["Y"], d["Z"]), 4)]


# ---------------------------------------------------------------- Zip_MedianSoldPricePerSqft_AllHomes.csv (own2)
ZIP = "Zip_MedianSoldPricePerSqft_AllHomes.csv"


@q(910109)
def _():
    z = load(ZIP)
    miss = z["MedianSoldPricePerSqft"].isna().groupby(z["RegionName"]).sum()
    zc, n = top(miss, 910109)
    return [("zip_code", int(zc), "int")]


@alt(910109)
def _():
    z = load(ZIP)
    cnt = {}
    for rn, v in zip(z["RegionName"], z["MedianSoldPricePerSqft"]):
        cnt[rn] = cnt.get(rn, 0) + (1 if np.isnan(v) else 0)
    zc = max(cnt, key=cnt.get)
    return [("zip_code", int(zc), "int")]


@q(910110)
def _():
    z = load(ZIP)
    z["year"] = z["Month"].str[:4].astype(int)
    ym = z.groupby("year")["MedianSoldPricePerSqft"].mean().dropna()
    assert (np.diff(ym.index) == 1).all()
    ch = ym.pct_change().dropna() * 100
    yr, v = top(ch, 910110)
    return [("year", int(yr), "int"), ("increase_percent", v, 2)]


@alt(910110)
def _():
    z = load(ZIP)
    s, n = {}, {}
    for m, v in zip(z["Month"], z["MedianSoldPricePerSqft"]):
        if not np.isnan(v):
            y = int(m.split("-")[0])
            s[y] = s.get(y, 0) + v
            n[y] = n.get(y, 0) + 1
    years = sorted(s)
    best = max(((y, (s[y] / n[y]) / (s[y - 1] / n[y - 1]) * 100 - 100) for y in years[1:]), key=lambda t: t[1])
    return [("year", best[0], "int"), ("increase_percent", best[1], 2)]


# ---------------------------------------------------------------- bitconnect_price.csv (own2)
@q(910111)
def _():
    b = load("bitconnect_price.csv")
    b["d"] = pd.to_datetime(b["Date"], format="%b %d, %Y")
    b = b.sort_values("d").reset_index(drop=True)
    b["ret"] = np.log(b["Close"] / b["Close"].shift(1))
    worst, _v = top(b.dropna(subset=["ret"]).set_index("Date")["ret"], 910111, largest=False)
    return [("std_log_return", b["ret"].std(), 4), ("worst_day", worst, "str")]


@alt(910111)
def _():
    b = load("bitconnect_price.csv")
    assert pd.to_datetime(b["Date"], format="%b %d, %Y").is_monotonic_decreasing
    c = b["Close"].to_numpy()[::-1]
    dates = b["Date"].to_numpy()[::-1]
    r = np.diff(np.log(c))
    return [("std_log_return", r.std(ddof=1), 4), ("worst_day", dates[1 + r.argmin()], "str")]


@q(910112)
def _():
    b = load("bitconnect_price.csv")
    mc = pd.to_numeric(b["Market Cap"].str.replace(",", "", regex=False))
    return [("median_market_cap", mc.median(), "int")]


@alt(910112)
def _():
    b = load("bitconnect_price.csv")
    v = sorted(int(s.replace(",", "")) for s in b["Market Cap"])
    assert len(v) % 2 == 1
    return [("median_market_cap", v[len(v) // 2], "int")]


# ---------------------------------------------------------------- city_departments_in_current_budget.csv (own2)
@q(910113)
def _():
    c = load("city_departments_in_current_budget.csv")
    grp, n = top(c["dept_group"].value_counts(), 910113)
    return [("largest_group", grp, "str")]


@alt(910113)
def _():
    c = load("city_departments_in_current_budget.csv")
    cnt = {}
    for g in c["dept_group"]:
        cnt[g] = cnt.get(g, 0) + 1
    g = max(cnt, key=cnt.get)
    return [("largest_group", g, "str")]


# ---------------------------------------------------------------- random_stock_data.csv (own2)
@q(910114)
def _():
    s = load("random_stock_data.csv")
    s["session"] = np.where(np.arange(len(s)) < 375, 1, 2)
    assert s["Time"].iloc[375] == "09:15:59" and s["Time"].iloc[:375].is_monotonic_increasing
    out = []
    for k, g in s.groupby("session"):
        out.append((f"vwap_session_{k}", (g["Close"] * g["Volume"]).sum() / g["Volume"].sum(), 2))
    return out


@alt(910114)
def _():
    s = load("random_stock_data.csv")
    t = s["Time"].to_numpy()
    sess = np.concatenate([[1], 1 + np.cumsum(t[1:] < t[:-1])])  # a new session starts when the clock goes back
    out = []
    for k in (1, 2):
        m = sess == k
        out.append((f"vwap_session_{k}", np.average(s["Close"].to_numpy()[m], weights=s["Volume"].to_numpy()[m]), 2))
    return out


@q(910115)
def _():
    v = load("random_stock_data.csv")["Volume"]
    return [("skewness", stats.skew(v), 2), ("kurtosis", stats.kurtosis(v), 2)]


@alt(910115)
def _():
    v = load("random_stock_data.csv")["Volume"].to_numpy()
    return [("skewness", _skew_pop(v), 2), ("kurtosis", _kurt_pop(v), 2)]


@q(910116)
def _():
    v = load("random_stock_data.csv")["Volume"]
    return [("outlier_count", int((np.abs(stats.zscore(v)) > 3).sum()), "int")]


@alt(910116)
def _():
    return [("outlier_count", _h_zcount(load("random_stock_data.csv")["Volume"]), "int")]


@q(910117)
def _():
    s = load("random_stock_data.csv")
    s["range"] = s["High"] - s["Low"]
    return [("correlation", s["range"].corr(s["Volume"]), 4)]


@alt(910117)
def _():
    s = load("random_stock_data.csv")
    return [("correlation", _h_pearson(s["High"].to_numpy() - s["Low"].to_numpy(), s["Volume"]), 4)]


# ---------------------------------------------------------------- ravenna_250715.csv (own2)
@q(910118)
def _():
    r = load("ravenna_250715.csv")
    res = stats.pearsonr(r["temp"], r["humidity"])
    return [("correlation", res.statistic, 4), ("p_value", res.pvalue, 4)]


@alt(910118)
def _():
    r = load("ravenna_250715.csv")
    rr = _h_pearson(r["temp"], r["humidity"])
    n = len(r)
    t = rr * math.sqrt((n - 2) / (1 - rr ** 2))
    return [("correlation", rr, 4), ("p_value", 2 * stats.t.sf(abs(t), n - 2), 4)]


@q(910119)
def _():
    res = stats.shapiro(load("ravenna_250715.csv")["temp"])
    return [("w_statistic", res.statistic, 4)]


# ---------------------------------------------------------------- test_ave.csv (own2)
@q(910120)
def _():
    t = load("test_ave.csv")
    band, rate = top(t.groupby("AgeBand")["Survived"].mean(), 910120)
    return [("age_band", int(band), "int"), ("survival_rate", rate, 3)]


@alt(910120)
def _():
    t = load("test_ave.csv")
    bands = t["AgeBand"].to_numpy()
    surv = t["Survived"].to_numpy()
    rates = {b: surv[bands == b].sum() / (bands == b).sum() for b in np.unique(bands)}
    b = max(rates, key=rates.get)
    return [("age_band", int(b), "int"), ("survival_rate", rates[b], 3)]


def _ave_clean():
    t = load("test_ave.csv")
    return t[t["Pclass"].isin([1, 2, 3])], len(t)


@q(910121)
def _():
    t, n = _ave_clean()
    chi2 = stats.chi2_contingency(pd.crosstab(t["Pclass"], t["Survived"]))[0]
    return [("removed_rows", n - len(t), "int"), ("chi2_statistic", chi2, 2)]


@alt(910121)
def _():
    t = load("test_ave.csv")
    keep = np.isin(t["Pclass"].to_numpy(), [1, 2, 3])
    tab = np.zeros((3, 2))
    for p, s in zip(t["Pclass"].to_numpy()[keep], t["Survived"].to_numpy()[keep]):
        tab[p - 1, s] += 1
    return [("removed_rows", int((~keep).sum()), "int"), ("chi2_statistic", _h_chi2(tab), 2)]


def _ave_lr(solver):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    t, _n = _ave_clean()
    X = pd.DataFrame({"Pclass": t["Pclass"], "Sex": (t["Sex"] == "female").astype(int),
                      "AgeBand": t["AgeBand"], "Fare": t["Fare"]})
    Xtr, Xte, ytr, yte = train_test_split(X, t["Survived"], test_size=0.3, random_state=1)
    m = LogisticRegression(max_iter=1000, solver=solver).fit(Xtr, ytr)
    return (m.predict(Xte) == yte).mean(), np.abs(m.decision_function(Xte)).min()


@q(910122)
def _():
    acc, margin = _ave_lr("lbfgs")
    if margin < 1e-2:
        UNIQUE_ERRORS.append(f"910122: a test point lies near the decision boundary ({margin})")
    return [("accuracy", acc, 4)]


@alt(910122)
def _():
    return [("accuracy", _ave_lr("newton-cg")[0], 4)]


# ---------------------------------------------------------------- test_x.csv (own2)
@q(910123)
def _():
    x = load("test_x.csv")
    return [("spearman_rho", x["Pclass"].corr(x["Fare"], method="spearman"), 4)]


@alt(910123)
def _():
    x = load("test_x.csv")
    return [("spearman_rho", _h_spearman(x["Pclass"], x["Fare"]), 4)]


@q(910124)
def _():
    x = load("test_x.csv")
    return [("chi2_statistic", stats.chi2_contingency(pd.crosstab(x["Embarked"], x["Pclass"]))[0], 2)]


@alt(910124)
def _():
    x = load("test_x.csv")
    tab = np.zeros((3, 3))
    for e, p in zip(x["Embarked"], x["Pclass"]):
        tab[e, p - 1] += 1
    return [("chi2_statistic", _h_chi2(tab), 2)]


# ---------------------------------------------------------------- traj-Osak.csv (own2)
@q(910125)
def _():
    t = load("traj-Osak.csv")
    most_visits, _a = top(t["poiID"].value_counts(), 910125)
    most_users, _b = top(t.groupby("poiID")["userID"].nunique(), 910125)
    return [("poi_most_visits", int(most_visits), "int"), ("poi_most_users", int(most_users), "int")]


@alt(910125)
def _():
    t = load("traj-Osak.csv")
    visits, users = {}, {}
    for p, u in zip(t["poiID"], t["userID"]):
        visits[p] = visits.get(p, 0) + 1
        users.setdefault(p, set()).add(u)
    return [("poi_most_visits", int(max(visits, key=visits.get)), "int"),
            ("poi_most_users", int(max(users, key=lambda k: len(users[k]))), "int")]


@q(910126)
def _():
    t = load("traj-Osak.csv")
    return [("spearman_rho", t["#photo"].corr(t["trajLen"], method="spearman"), 4)]


@alt(910126)
def _():
    t = load("traj-Osak.csv")
    return [("spearman_rho", stats.spearmanr(t["#photo"], t["trajLen"]).statistic, 4)]


@q(910127)
def _():
    p = load("traj-Osak.csv")["#photo"]
    return [("outlier_count", int((np.abs(stats.zscore(p)) > 3).sum()), "int")]


@alt(910127)
def _():
    return [("outlier_count", _h_zcount(load("traj-Osak.csv")["#photo"]), "int")]


# ---------------------------------------------------------------- unemployement_industry.csv (own2)
IND = "Industry and class of worker"


@q(910128)
def _():
    u = load("unemployement_industry.csv")
    a = pd.to_numeric(u["Total Mar.2019"], errors="coerce")
    b = pd.to_numeric(u["Total Mar.2020"], errors="coerce")
    ch = pd.Series((b - a).to_numpy(), index=u[IND]).dropna()
    inc, _a = top(ch, 910128)
    dec, _b = top(ch, 910128, largest=False)
    return [("largest_increase", inc, "str"), ("largest_decrease", dec, "str")]


@alt(910128)
def _():
    u = load("unemployement_industry.csv")

    def num(s):
        try:
            return float(s)
        except (TypeError, ValueError):
            return None
    ch = []
    for name, a, b in zip(u[IND], u["Total Mar.2019"], u["Total Mar.2020"]):
        a, b = num(a), num(b)
        if a is not None and b is not None and not (math.isnan(a) or math.isnan(b)):
            ch.append((b - a, name))
    return [("largest_increase", max(ch)[1], "str"), ("largest_decrease", min(ch)[1], "str")]


@q(910129)
def _():
    u = load("unemployement_industry.csv")
    m = pd.to_numeric(u["Men Mar.2020"], errors="coerce")
    w = pd.to_numeric(u["Women Mar.2020"], errors="coerce")
    ok = m.notna() & w.notna()
    return [("correlation", m[ok].corr(w[ok]), 3)]


@alt(910129)
def _():
    u = load("unemployement_industry.csv")
    pairs = []
    for a, b in zip(u["Men Mar.2020"], u["Women Mar.2020"]):
        try:
            pairs.append((float(a), float(b)))
        except (TypeError, ValueError):
            pass
    pairs = [p for p in pairs if not (math.isnan(p[0]) or math.isnan(p[1]))]
    return [("correlation", _h_pearson([p[0] for p in pairs], [p[1] for p in pairs]), 3)]


# ---------------------------------------------------------------- weather_data_1864.csv (own2)
@q(910130)
def _():
    res = stats.normaltest(load("weather_data_1864.csv")["TMAX_F"])
    return [("k2_statistic", res.statistic, 2)]


@alt(910130)
def _():
    x = load("weather_data_1864.csv")["TMAX_F"].to_numpy()
    k2 = stats.skewtest(x).statistic ** 2 + stats.kurtosistest(x).statistic ** 2
    return [("k2_statistic", k2, 2)]


@q(910131)
def _():
    w = load("weather_data_1864.csv")
    w["month"] = pd.to_datetime(w["datetime_dt"]).dt.month
    mm = w.groupby(["station", "month"])["TMAX_F"].mean().unstack()
    st, rng = top(mm.max(axis=1) - mm.min(axis=1), 910131)
    for s, row in mm.iterrows():  # the warmest month of every station must be unique
        r = row.dropna().sort_values()
        if r.iloc[-1] - r.iloc[-2] < 1e-6:
            UNIQUE_ERRORS.append(f"910131: tie for the warmest month of {s}")
    south = int(mm.idxmax(axis=1).isin([12, 1, 2]).sum())
    return [("station", st, "str"), ("range", rng, 2), ("summer_peak_count", south, "int")]


@alt(910131)
def _():
    w = load("weather_data_1864.csv")
    acc = {}
    for s, d, v in zip(w["station"], w["datetime"], w["TMAX_F"]):
        acc.setdefault(s, {}).setdefault(d // 100 % 100, []).append(v)
    rng, south = {}, 0
    for s, months in acc.items():
        means = {m: np.mean(v) for m, v in months.items()}
        rng[s] = max(means.values()) - min(means.values())
        south += max(means, key=means.get) in (12, 1, 2)
    s = max(rng, key=rng.get)
    return [("station", s, "str"), ("range", rng[s], 2), ("summer_peak_count", south, "int")]


@q(910132)
def _():
    w = load("weather_data_1864.csv")
    p = w.pivot(index="datetime", columns="station", values="TMAX_F")[["ITE00100550", "ITE00100554"]].dropna()
    return [("correlation", p["ITE00100550"].corr(p["ITE00100554"]), 4)]


@alt(910132)
def _():
    w = load("weather_data_1864.csv")
    a = w[w["station"] == "ITE00100550"][["datetime", "TMAX_F"]]
    b = w[w["station"] == "ITE00100554"][["datetime", "TMAX_F"]]
    m = a.merge(b, on="datetime")
    return [("correlation", _h_pearson(m["TMAX_F_x"], m["TMAX_F_y"]), 4)]


# ---------------------------------------------------------------- 20170413_000000_group_statistics.csv (own2)
@q(910133)
def _():
    g = load("20170413_000000_group_statistics.csv")
    return [("spearman_rho", g["num. calls answered"].corr(g["avg. num. agents talking "], method="spearman"), 4)]


@alt(910133)
def _():
    g = load("20170413_000000_group_statistics.csv")
    return [("spearman_rho", _h_spearman(g["num. calls answered"], g["avg. num. agents talking "]), 4)]


# ---------------------------------------------------------------- GODREJIND.csv (own2)
@q(910134)
def _():
    g = load("GODREJIND.csv")
    assert pd.to_datetime(g["Date"], format="%d-%b-%Y").is_monotonic_increasing
    r = g["Close Price"].pct_change().dropna()
    lo, hi = iqr_bounds(r)
    return [("outlier_count", int(((r < lo) | (r > hi)).sum()), "int")]


@alt(910134)
def _():
    c = load("GODREJIND.csv")["Close Price"].to_numpy()
    r = c[1:] / c[:-1] - 1
    return [("outlier_count", int((~_h_iqr_mask(r)).sum()), "int")]


@q(910135)
def _():
    g = load("GODREJIND.csv")
    return [("correlation", g["No. of Trades"].corr(g["Turnover"]), 4)]


@alt(910135)
def _():
    g = load("GODREJIND.csv")
    return [("correlation", _h_pearson(g["No. of Trades"], g["Turnover"]), 4)]


# ---------------------------------------------------------------- YAHOO-BTC_USD_D.csv (own2)
@q(910136)
def _():
    y = load("YAHOO-BTC_USD_D.csv").dropna(subset=["Close"])
    y["year"] = pd.to_datetime(y["Date"]).dt.year
    y = y.sort_values("Date")
    g = y[y["year"].between(2015, 2019)].groupby("year")["Close"]
    ret = g.last() / g.first() - 1
    best, _b = top(ret, 910136)
    worst, wv = top(ret, 910136, largest=False)
    return [("best_year", int(best), "int"), ("worst_year", int(worst), "int"), ("worst_return", wv, 3)]


@alt(910136)
def _():
    y = load("YAHOO-BTC_USD_D.csv")
    first, last = {}, {}
    for d, c in zip(y["Date"], y["Close"]):
        yr = int(d[:4])
        if not np.isnan(c) and 2015 <= yr <= 2019:
            first.setdefault(yr, c)
            last[yr] = c
    ret = {k: last[k] / first[k] - 1 for k in first}
    b, w = max(ret, key=ret.get), min(ret, key=ret.get)
    return [("best_year", b, "int"), ("worst_year", w, "int"), ("worst_return", ret[w], 3)]


# ---------------------------------------------------------------- arrest_expungibility.csv (own2)
@q(910137)
def _():
    a = load("arrest_expungibility.csv").dropna(subset=["Count"])
    a["w"] = a["Age"] * a["Count"]
    g = a.groupby("Category")[["w", "Count"]].sum()
    cat, _v = top(g["w"] / g["Count"], 910137)
    return [("weighted_mean_age", a["w"].sum() / a["Count"].sum(), 2), ("oldest_category", cat, "str")]


@alt(910137)
def _():
    a = load("arrest_expungibility.csv")
    ok = a["Count"].notna().to_numpy()
    age, cnt, cat = a["Age"].to_numpy()[ok], a["Count"].to_numpy()[ok], a["Category"].to_numpy()[ok]
    per = {c: np.average(age[cat == c], weights=cnt[cat == c]) for c in np.unique(cat)}
    return [("weighted_mean_age", np.average(age, weights=cnt), 2), ("oldest_category", max(per, key=per.get), "str")]


@q(910138)
def _():
    a = load("arrest_expungibility.csv")
    res = stats.ks_2samp(a.loc[a["Offense_Type"] == "felony", "Age"], a.loc[a["Offense_Type"] == "misdemeanor", "Age"])
    return [("ks_statistic", res.statistic, 4)]


@alt(910138)
def _():
    a = load("arrest_expungibility.csv")
    x = np.sort(a.loc[a["Offense_Type"] == "felony", "Age"].to_numpy(float))
    y = np.sort(a.loc[a["Offense_Type"] == "misdemeanor", "Age"].to_numpy(float))
    grid = np.union1d(x, y)
    d = np.abs(np.searchsorted(x, grid, side="right") / len(x) - np.searchsorted(y, grid, side="right") / len(y)).max()
    return [("ks_statistic", d, 4)]


# ---------------------------------------------------------------- cost_data_with_errors.csv (own2)
@q(910139)
def _():
    c = load("cost_data_with_errors.csv")
    return [("h_statistic", stats.kruskal(*[g["deaths"] for _k, g in c.groupby("max_storm_cat")]).statistic, 2)]


@alt(910139)
def _():
    c = load("cost_data_with_errors.csv")
    cat, d = c["max_storm_cat"].to_numpy(), c["deaths"].to_numpy()
    return [("h_statistic", _h_kruskal([d[cat == k] for k in np.unique(cat)]), 2)]


@q(910140)
def _():
    d = load("cost_data_with_errors.csv")["damage_USD"]
    return [("outlier_count", int((np.abs(stats.zscore(d)) > 3).sum()), "int")]


@alt(910140)
def _():
    return [("outlier_count", _h_zcount(load("cost_data_with_errors.csv")["damage_USD"]), "int")]


# ---------------------------------------------------------------- country_vaccinations.csv (own2)
@q(910141)
def _():
    v = load("country_vaccinations.csv")
    per_country = v.groupby("country")["vaccines"].first()
    assert v.groupby("country")["vaccines"].nunique().max() == 1
    combo, n = top(per_country.value_counts(), 910141)
    return [("vaccines", combo, "str")]


@alt(910141)
def _():
    v = load("country_vaccinations.csv").drop_duplicates(["country", "vaccines"])
    cnt = {}
    for s in v["vaccines"]:
        cnt[s] = cnt.get(s, 0) + 1
    s = max(cnt, key=cnt.get)
    return [("vaccines", s, "str")]


# ---------------------------------------------------------------- e5_aapl.csv (own2)
@q(910142)
def _():
    c = load("e5_aapl.csv")["Close"]
    r = np.log(c / c.shift(1)).dropna()
    return [("jb_statistic", stats.jarque_bera(r).statistic, 1)]


@alt(910142)
def _():
    r = np.diff(np.log(load("e5_aapl.csv")["Close"].to_numpy()))
    s, k = _skew_pop(r), _kurt_pop(r)
    return [("jb_statistic", len(r) / 6 * (s ** 2 + k ** 2 / 4), 1)]


@q(910143)
def _():
    v = load("e5_aapl.csv")["Volume"]
    lo, hi = iqr_bounds(v)
    out = (v < lo) | (v > hi)
    return [("outlier_count", int(out.sum()), "int"), ("mean_volume", v[~out].mean(), 2)]


@alt(910143)
def _():
    v = load("e5_aapl.csv")["Volume"].to_numpy(float)
    k = _h_iqr_mask(v)
    return [("outlier_count", int((~k).sum()), "int"), ("mean_volume", v[k].sum() / k.sum(), 2)]


# ---------------------------------------------------------------- estimated_numbers.csv (own2)
@q(910144)
def _():
    e = load("estimated_numbers.csv")
    p = e.pivot(index="Country", columns="Year", values="No. of cases_median")
    ch = (p[2017] - p[2010]).dropna()
    dec, _a = top(ch, 910144, largest=False)
    inc, _b = top(ch, 910144)
    return [("largest_decrease", dec, "str"), ("largest_increase", inc, "str")]


@alt(910144)
def _():
    e = load("estimated_numbers.csv")
    v = {(c, y): n for c, y, n in zip(e["Country"], e["Year"], e["No. of cases_median"])}
    ch = {c: v[(c, 2017)] - v[(c, 2010)] for c, y in v if y == 2017 and (c, 2010) in v}
    return [("largest_decrease", min(ch, key=ch.get), "str"), ("largest_increase", max(ch, key=ch.get), "str")]


# ---------------------------------------------------------------- fb_articles_20180822_20180829_df.csv (own2)
FB = "fb_articles_20180822_20180829_df.csv"


@q(910145)
def _():
    f = load(FB)
    f["word_count"] = f["text"].str.split().str.len()
    return [("spearman_rho", f["word_count"].corr(f["compound"], method="spearman"), 4)]


@alt(910145)
def _():
    f = load(FB)
    wc = [len(t.split()) for t in f["text"]]
    return [("spearman_rho", _h_spearman(wc, f["compound"]), 4)]


@q(910146)
def _():
    return [("w_statistic", stats.shapiro(load(FB)["compound"]).statistic, 4)]


# ---------------------------------------------------------------- ferret-Pitt-2-preinf-lib2-100_sitediffsel.csv (own2)
FERRET = "ferret-Pitt-2-preinf-lib2-100_sitediffsel.csv"


@q(910147)
def _():
    f = load(FERRET)
    ha2 = f["site"].str.startswith("(HA2)")
    res = stats.mannwhitneyu(f.loc[ha2, "abs_diffsel"], f.loc[~ha2, "abs_diffsel"])
    return [("p_value", res.pvalue, 4)]


@alt(910147)
def _():
    f = load(FERRET)
    ha2 = np.array([s[:5] == "(HA2)" for s in f["site"]])
    v = f["abs_diffsel"].to_numpy()
    u, p = _h_mwu(v[ha2], v[~ha2])
    assert abs(stats.mannwhitneyu(v[~ha2], v[ha2]).pvalue - p) < 1e-12  # the order of the samples does not matter
    return [("p_value", p, 4)]


# ---------------------------------------------------------------- imp.score.ldlr.metabolome.csv (own2)
IMP = "imp.score.ldlr.metabolome.csv"


@q(910148)
def _():
    m = load(IMP)
    return [("spearman_rho", m["row m/z"].corr(m["row retention time"], method="spearman"), 4)]


@alt(910148)
def _():
    m = load(IMP)
    return [("spearman_rho", _h_spearman(m["row m/z"], m["row retention time"]), 4)]


@q(910149)
def _():
    m = load(IMP)
    lib = m["LibraryID"].notna()
    res = stats.mannwhitneyu(m.loc[lib, "importance.score"], m.loc[~lib, "importance.score"])
    return [("p_value", res.pvalue, 4)]


@alt(910149)
def _():
    m = load(IMP)
    lib = m["LibraryID"].notna().to_numpy()
    v = m["importance.score"].to_numpy()
    u, p = _h_mwu(v[lib], v[~lib])
    assert abs(stats.mannwhitneyu(v[~lib], v[lib]).pvalue - p) < 1e-12  # the order of the samples does not matter
    return [("p_value", p, 4)]


# ---------------------------------------------------------------- my_test_01.csv (own2)
@q(910150)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import KFold, cross_val_score
    m = load("my_test_01.csv")
    X, y = m.drop(columns="MedianHouseValue"), m["MedianHouseValue"]
    s = cross_val_score(LinearRegression(), X, y, cv=KFold(n_splits=5), scoring="r2")
    assert np.allclose(s, cross_val_score(LinearRegression(), X, y, cv=5, scoring="r2"))
    return [("mean_r2", s.mean(), 4)]


@alt(910150)
def _():
    m = load("my_test_01.csv")
    X = m.drop(columns="MedianHouseValue").to_numpy()
    y = m["MedianHouseValue"].to_numpy()
    n = len(y)
    sizes = [n // 5 + (1 if i < n % 5 else 0) for i in range(5)]
    scores, start = [], 0
    for sz in sizes:
        te = np.zeros(n, bool)
        te[start:start + sz] = True
        start += sz
        pred, _b = _h_ols(X[~te], y[~te], X[te])
        scores.append(_h_r2(y[te], pred))
    return [("mean_r2", float(np.mean(scores)), 4)]


# ---------------------------------------------------------------- oecd_education_spending.csv (own2)
@q(910151)
def _():
    o = load("oecd_education_spending.csv")
    p = o[o["TIME"] == 2012].pivot(index="LOCATION", columns="SUBJECT", values="Value").dropna()
    assert len(p) == 36
    return [("correlation", p["TRY"].corr(p["PRY_NTRY"]), 4)]


@alt(910151)
def _():
    o = load("oecd_education_spending.csv")
    o = o[(o["TIME"] == 2012) & o["Value"].notna()]
    a = dict(zip(o.loc[o["SUBJECT"] == "TRY", "LOCATION"], o.loc[o["SUBJECT"] == "TRY", "Value"]))
    b = dict(zip(o.loc[o["SUBJECT"] == "PRY_NTRY", "LOCATION"], o.loc[o["SUBJECT"] == "PRY_NTRY", "Value"]))
    common = sorted(set(a) & set(b))
    return [("correlation", _h_pearson([a[k] for k in common], [b[k] for k in common]), 4)]


# ---------------------------------------------------------------- titanic_test.csv (own2)
@q(910152)
def _():
    t = load("titanic_test.csv")
    t["group_size"] = t.groupby("Ticket")["Ticket"].transform("size")
    t["fare_pp"] = t["Fare"] / t["group_size"]
    med = t.dropna(subset=["fare_pp"]).groupby("Pclass")["fare_pp"].median()
    return [("median_class1", med[1], 2), ("median_class3", med[3], 2)]


@alt(910152)
def _():
    t = load("titanic_test.csv")
    size = {}
    for k in t["Ticket"]:
        size[k] = size.get(k, 0) + 1
    per = {1: [], 3: []}
    for k, f, c in zip(t["Ticket"], t["Fare"], t["Pclass"]):
        if c in per and not np.isnan(f):
            per[c].append(f / size[k])
    return [("median_class1", float(np.median(per[1])), 2), ("median_class3", float(np.median(per[3])), 2)]


@q(910153)
def _():
    t = load("titanic_test.csv").dropna(subset=["Fare"])
    return [("h_statistic", stats.kruskal(*[g["Fare"] for _k, g in t.groupby("Embarked")]).statistic, 2)]


@alt(910153)
def _():
    t = load("titanic_test.csv")
    ok = t["Fare"].notna().to_numpy()
    e, f = t["Embarked"].to_numpy()[ok], t["Fare"].to_numpy()[ok]
    return [("h_statistic", _h_kruskal([f[e == k] for k in ("C", "Q", "S")]), 2)]


# ---------------------------------------------------------------- tr_eikon_eod_data.csv (own2)
@q(910154)
def _():
    v = load("tr_eikon_eod_data.csv")[".VIX"].dropna()
    return [("kurtosis", stats.kurtosis(v), 4)]


@alt(910154)
def _():
    v = load("tr_eikon_eod_data.csv")[".VIX"].to_numpy()
    v = v[~np.isnan(v)]
    return [("kurtosis", _kurt_pop(v), 4)]


@q(910155)
def _():
    e = load("tr_eikon_eod_data.csv").dropna(subset=["SPY", ".VIX"])
    r = e[["SPY", ".VIX"]].pct_change().dropna()
    return [("correlation", r["SPY"].corr(r[".VIX"]), 4)]


@alt(910155)
def _():
    e = load("tr_eikon_eod_data.csv")
    ok = (e["SPY"].notna() & e[".VIX"].notna()).to_numpy()
    a, b = e["SPY"].to_numpy()[ok], e[".VIX"].to_numpy()[ok]
    return [("correlation", _h_pearson(a[1:] / a[:-1] - 1, b[1:] / b[:-1] - 1), 4)]


# ---------------------------------------------------------------- veracruz 2016.csv (own2)
@q(910156)
def _():
    f = load("veracruz 2016.csv")["Full"]
    return [("outlier_count", int((np.abs(stats.zscore(f)) > 3).sum()), "int")]


@alt(910156)
def _():
    return [("outlier_count", _h_zcount(load("veracruz 2016.csv")["Full"]), "int")]


# ---------------------------------------------------------------- well_2_complete.csv (own2)
@q(910157)
def _():
    w = load("well_2_complete.csv")
    lo, hi = iqr_bounds(w["GR"])
    out = (w["GR"] < lo) | (w["GR"] > hi)
    return [("outlier_count", int(out.sum()), "int"), ("mean_nphi", w.loc[~out, "NPHI"].mean(), 4)]


@alt(910157)
def _():
    w = load("well_2_complete.csv")
    k = _h_iqr_mask(w["GR"])
    return [("outlier_count", int((~k).sum()), "int"), ("mean_nphi", w["NPHI"].to_numpy()[k].mean(), 4)]


# ---------------------------------------------------------------- test_Y3wMUE5_7gLdaTN.csv (own2)
@q(910158)
def _():
    l = load("test_Y3wMUE5_7gLdaTN.csv").dropna(subset=["Gender"])
    chi2 = stats.chi2_contingency(pd.crosstab(l["Gender"], l["Married"]))[0]
    return [("chi2_statistic", chi2, 2)]


@alt(910158)
def _():
    l = load("test_Y3wMUE5_7gLdaTN.csv")
    tab = np.zeros((2, 2))
    for g, m in zip(l["Gender"], l["Married"]):
        if isinstance(g, str):
            tab[int(g == "Male"), int(m == "Yes")] += 1
    return [("chi2_statistic", _h_chi2(tab), 2)]


# ---------------------------------------------------------------- tree.csv (own2)
def _tree_split():
    from sklearn.model_selection import train_test_split
    t = load("tree.csv")
    return train_test_split(np.log(t[["DBH_CM"]]), np.log(t["HT_M"]), test_size=0.2, random_state=42)


@q(910159)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    Xtr, Xte, ytr, yte = _tree_split()
    m = LinearRegression().fit(Xtr, ytr)
    return [("slope", m.coef_[0], 4), ("r2_score", r2_score(yte, m.predict(Xte)), 3)]


@alt(910159)
def _():
    Xtr, Xte, ytr, yte = _tree_split()
    pred, beta = _h_ols(Xtr, ytr, Xte)
    assert abs(np.log10(np.e) - 1 / np.log(10)) < 1e-15
    # the slope of a log-log fit does not depend on the log base
    pred10, beta10 = _h_ols(Xtr / np.log(10), ytr / np.log(10), Xte / np.log(10))
    assert abs(beta10[1] - beta[1]) < 1e-9 and abs(_h_r2(yte / np.log(10), pred10) - _h_r2(yte, pred)) < 1e-9
    return [("slope", beta[1], 4), ("r2_score", _h_r2(yte, pred), 3)]


# ---------------------------------------------------------------- 3901.csv (own2)
def _sun_split():
    from sklearn.model_selection import train_test_split
    s = load("3901.csv")
    return train_test_split(s[["MEANGBT", "MEANGAM", "SHRGT45"]], s["MEANPOT"], test_size=0.2, random_state=0)


@q(910160)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    Xtr, Xte, ytr, yte = _sun_split()
    return [("r2_score", r2_score(yte, LinearRegression().fit(Xtr, ytr).predict(Xte)), 4)]


@alt(910160)
def _():
    Xtr, Xte, ytr, yte = _sun_split()
    pred, _b = _h_ols(Xtr, ytr, Xte)
    return [("r2_score", _h_r2(yte, pred), 4)]


# ================================================================ own3 (dabench_own3.jsonl, 910201 ... 910260)
# Helpers for the independent recomputations of own3 (own2's hand-written helpers above are reused).
def _h3_std(x, ddof=0):
    x = np.asarray(x, float)
    return math.sqrt(((x - x.mean()) ** 2).sum() / (len(x) - ddof))


def _h3_quartile(x, p):
    """Linear-interpolation percentile (pandas' and numpy's default), written out by hand."""
    xs = sorted(float(v) for v in x)
    pos = (len(xs) - 1) * p
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _h3_iqr_out(x):
    """Boolean array: True for the values outside [Q1 - 1.5 IQR, Q3 + 1.5 IQR] (hand-written quartiles)."""
    x = np.asarray(x, float)
    q1, q3 = _h3_quartile(x, 0.25), _h3_quartile(x, 0.75)
    return (x < q1 - 1.5 * (q3 - q1)) | (x > q3 + 1.5 * (q3 - q1))


def _h3_median(x):
    return _h3_quartile(x, 0.5)


def _h3_argbest(d: dict, largest=True):
    """Key with the largest (smallest) value of a plain dict; asserts that the winner is unique."""
    items = sorted(d.items(), key=lambda kv: kv[1], reverse=largest)
    assert len(items) < 2 or abs(items[0][1] - items[1][1]) > 1e-9 * max(1.0, abs(items[0][1])), items[:2]
    return items[0]


def _h3_ks2(a, b):
    """Two-sample Kolmogorov-Smirnov statistic D = max |F_a - F_b| over the pooled sample."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    allv = np.concatenate([a, b])
    fa = np.searchsorted(a, allv, side="right") / len(a)
    fb = np.searchsorted(b, allv, side="right") / len(b)
    return np.abs(fa - fb).max()


def _h3_anova_f(groups):
    groups = [np.asarray(g, float) for g in groups]
    allv = np.concatenate(groups)
    k, n = len(groups), len(allv)
    ssb = sum(len(g) * (g.mean() - allv.mean()) ** 2 for g in groups)
    ssw = sum(((g - g.mean()) ** 2).sum() for g in groups)
    return (ssb / (k - 1)) / (ssw / (n - k))


def _h3_chi2_p(table, yates=True):
    o = np.asarray(table, float)
    dof = (o.shape[0] - 1) * (o.shape[1] - 1)
    return stats.chi2.sf(_h_chi2(o, yates), dof)


def _h3_normaltest_p(x):
    """D'Agostino-Pearson K^2 test written out (the skewness and kurtosis z-scores of D'Agostino 1990 and
    Anscombe-Glynn 1983, as scipy.stats.normaltest uses them); returns the p-value."""
    x = np.asarray(x, float)
    n = len(x)
    b2 = _skew_pop(x)
    y = b2 * math.sqrt((n + 1) * (n + 3) / (6.0 * (n - 2)))
    beta2 = 3.0 * (n * n + 27 * n - 70) * (n + 1) * (n + 3) / ((n - 2.0) * (n + 5) * (n + 7) * (n + 9))
    w2 = -1 + math.sqrt(2 * (beta2 - 1))
    delta = 1 / math.sqrt(0.5 * math.log(w2))
    alpha = math.sqrt(2.0 / (w2 - 1))
    zs = delta * math.log(y / alpha + math.sqrt((y / alpha) ** 2 + 1))
    k = _kurt_pop(x) + 3
    e = 3.0 * (n - 1) / (n + 1)
    var = 24.0 * n * (n - 2) * (n - 3) / ((n + 1) ** 2 * (n + 3) * (n + 5))
    xk = (k - e) / math.sqrt(var)
    sqrtbeta1 = (6.0 * (n * n - 5 * n + 2) / ((n + 7) * (n + 9))
                 * math.sqrt(6.0 * (n + 3) * (n + 5) / (n * (n - 2) * (n - 3))))
    a = 6.0 + 8.0 / sqrtbeta1 * (2.0 / sqrtbeta1 + math.sqrt(1 + 4.0 / sqrtbeta1 ** 2))
    term1 = 1 - 2 / (9.0 * a)
    denom = 1 + xk * math.sqrt(2 / (a - 4.0))
    term2 = np.sign(denom) * ((1 - 2.0 / a) / abs(denom)) ** (1 / 3.0)
    zk = (term1 - term2) / math.sqrt(2 / (9.0 * a))
    return stats.chi2.sf(zs ** 2 + zk ** 2, 2)


def _h3_logit_fit(Xtr, ytr, Xte):
    """Logistic regression with sklearn's default L2 penalty (C=1, unpenalised intercept), minimised with
    scipy's BFGS on the exact objective; returns the test decision values."""
    from scipy.optimize import minimize
    X = np.asarray(Xtr, float)
    y = np.asarray(ytr, float)

    def f(w):
        z = X @ w[1:] + w[0]
        loss = np.logaddexp(0, z).sum() - (y * z).sum() + 0.5 * (w[1:] ** 2).sum()
        p = 1 / (1 + np.exp(-z))
        g = np.concatenate([[(p - y).sum()], X.T @ (p - y) + w[1:]])
        return loss, g

    w = minimize(f, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                 options={"maxiter": 20000, "gtol": 1e-10, "ftol": 1e-15}).x
    return np.asarray(Xte, float) @ w[1:] + w[0]


# ---------------------------------------------------------------- Current_Logan.csv (own3)
@q(910201)
def _():
    c = pd.read_csv(TABLES / "Current_Logan.csv", header=1)
    c["Wins"] = pd.to_numeric(c["Wins"])
    g = c.groupby("School")["Wins"].agg(["size", "mean"])
    school, m = top(g.loc[g["size"] >= 3, "mean"], 910201)
    return [("best_school", school, "str"), ("mean_wins", m, 3)]


@alt(910201)
def _():
    lines = (TABLES / "Current_Logan.csv").read_text(encoding="utf-8-sig").splitlines()[2:]
    wins: dict = {}
    for line in lines:
        parts = line.split(",")
        wins.setdefault(parts[3], []).append(int(parts[0]))
    means = {s: sum(w) / len(w) for s, w in wins.items() if len(w) >= 3}
    s, m = _h3_argbest(means)
    return [("best_school", s, "str"), ("mean_wins", m, 3)]


# ---------------------------------------------------------------- city_departments_in_current_budget.csv (own3)
@q(910202)
def _():
    d = load("city_departments_in_current_budget.csv")
    d["word_count"] = d["Department Name"].str.split().str.len()
    grp, _m = top(d.groupby("dept_group")["word_count"].mean(), 910202)
    return [("top_group", grp, "str")]


@alt(910202)
def _():
    d = load("city_departments_in_current_budget.csv")
    per: dict = {}
    allc = []
    for name, g in zip(d["Department Name"], d["dept_group"]):
        n = len(name.split())
        allc.append(n)
        per.setdefault(g, []).append(n)
    grp, _m = _h3_argbest({k: sum(v) / len(v) for k, v in per.items()})
    assert abs(sum(allc) / len(allc) - d["Department Name"].str.split().str.len().mean()) < 1e-12
    return [("top_group", grp, "str")]


# ---------------------------------------------------------------- 0020200722.csv (own3)
@q(910203)
def _():
    n = load("0020200722.csv")
    shots = n[n["EVENTMSGTYPE"].isin([1, 2])]
    h3 = shots["HOMEDESCRIPTION"].str.contains("3PT", na=False)
    v3 = shots["VISITORDESCRIPTION"].str.contains("3PT", na=False)
    assert not (h3 & v3).any()
    made = shots["EVENTMSGTYPE"] == 1
    att = h3 | v3
    return [("home_made_3pt", int((h3 & made).sum()), "int"), ("visitor_made_3pt", int((v3 & made).sum()), "int"),
            ("three_point_pct", 100 * (att & made).sum() / att.sum(), 2)]


@alt(910203)
def _():
    n = load("0020200722.csv")
    hm = vm = a = m = 0
    for t, h, v in zip(n["EVENTMSGTYPE"], n["HOMEDESCRIPTION"], n["VISITORDESCRIPTION"]):
        if t not in (1, 2):
            continue
        ih = isinstance(h, str) and "3PT" in h
        iv = isinstance(v, str) and "3PT" in v
        if ih or iv:
            a += 1
            if t == 1:
                m += 1
                hm += ih
                vm += iv
    return [("home_made_3pt", hm, "int"), ("visitor_made_3pt", vm, "int"), ("three_point_pct", 100 * m / a, 2)]


# ---------------------------------------------------------------- 2014_q4.csv (own3)
_SIGNUP = "Annual Member Sign-Ups (midnight to 11:59 pm)"
_TRIPS = "Trips over the past 24-hours (midnight to 11:59pm)"


@q(910204)
def _():
    b = load("2014_q4.csv")
    v = pd.to_numeric(b[_SIGNUP], errors="coerce")
    diff = b["Total Annual Memberships Sold"].diff()
    ok = v.notna() & diff.notna()
    assert (v[ok] == diff[ok]).all() and v.iloc[0] == v.iloc[0]  # the rule holds; the first day is valid
    fixed = v.fillna(diff)
    assert int(v.isna().sum()) == 2
    return [("total_signups", fixed.sum(), "int"), ("correlation", fixed.corr(b[_TRIPS]), 4)]


@alt(910204)
def _():
    b = load("2014_q4.csv")
    tot = b["Total Annual Memberships Sold"].tolist()
    vals, bad = [], 0
    for i, s in enumerate(b[_SIGNUP]):
        if s.strip().isdigit():
            vals.append(float(s))
        else:
            bad += 1
            vals.append(float(tot[i] - tot[i - 1]))
    assert bad == 2
    return [("total_signups", sum(vals), "int"), ("correlation", _h_pearson(vals, b[_TRIPS]), 4)]


# ---------------------------------------------------------------- 2015.csv (own3)
@q(910205)
def _():
    s = load("2015.csv")
    lo, hi = iqr_bounds(s["Trust (Government Corruption)"])
    out = (s["Trust (Government Corruption)"] < lo) | (s["Trust (Government Corruption)"] > hi)
    return [("outlier_count", int(out.sum()), "int"), ("mean_happiness", s.loc[out, "Happiness Score"].mean(), 4)]


@alt(910205)
def _():
    s = load("2015.csv")
    out = _h3_iqr_out(s["Trust (Government Corruption)"])
    return [("outlier_count", int(out.sum()), "int"),
            ("mean_happiness", s["Happiness Score"].to_numpy()[out].mean(), 4)]


# ---------------------------------------------------------------- 20170413_000000_group_statistics.csv (own3)
@q(910206)
def _():
    g = load("20170413_000000_group_statistics.csv")
    hour = pd.to_datetime(g["timestamp"], format="%b %d  %Y %I:%M:%S %p").dt.hour
    h, _n = top(g.groupby(hour)["num. calls answered"].sum(), 910206)
    return [("busiest_hour", h, "int")]


@alt(910206)
def _():
    g = load("20170413_000000_group_statistics.csv")
    per: dict = {}
    for ts, n in zip(g["timestamp"], g["num. calls answered"]):
        hh, ampm = int(ts.split()[3].split(":")[0]), ts.split()[4]
        hour = hh % 12 + (12 if ampm == "PM" else 0)
        per[hour] = per.get(hour, 0) + n
    h, _n = _h3_argbest(per)
    return [("busiest_hour", h, "int")]


# ---------------------------------------------------------------- 3901.csv (own3)
@q(910207)
def _():
    s = load("3901.csv")
    return [("spearman_correlation", s["AREA_ACR"].corr(s["USFLUX"], method="spearman"), 3)]


@alt(910207)
def _():
    s = load("3901.csv")
    return [("spearman_correlation", _h_spearman(s["AREA_ACR"], s["USFLUX"]), 3)]


# ---------------------------------------------------------------- Credit.csv (own3)
def _credit_split():
    from sklearn.model_selection import train_test_split
    c = load("Credit.csv")
    X = c[["Income", "Limit", "Rating", "Cards", "Age", "Education"]].copy()
    X["Student"] = (c["Student"] == "Yes").astype(int)
    return train_test_split(X, c["Balance"], test_size=0.2, random_state=42)


@q(910208)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    Xtr, Xte, ytr, yte = _credit_split()
    p = LinearRegression().fit(Xtr, ytr).predict(Xte)
    return [("r2_score", r2_score(yte, p), 4)]


@alt(910208)
def _():
    Xtr, Xte, ytr, yte = _credit_split()
    pred, _b = _h_ols(Xtr, ytr, Xte)
    y = np.asarray(yte, float)
    return [("r2_score", _h_r2(y, pred), 4)]


# ---------------------------------------------------------------- DES=+2006261.csv (own3)
_AU = 149597870.7


@q(910209)
def _():
    d = load("DES=+2006261.csv")
    step = np.sqrt(d["X"].diff() ** 2 + d["Y"].diff() ** 2 + d["Z"].diff() ** 2)
    speed = step / (d["JDTDB"].diff() * 86400)
    return [("mean_speed", speed.mean(), 3), ("path_length_au", step.sum() / _AU, 4)]


@alt(910209)
def _():
    d = load("DES=+2006261.csv")
    rows = list(zip(d["JDTDB"], d["X"], d["Y"], d["Z"]))
    speeds, total = [], 0.0
    for (t0, *p0), (t1, *p1) in zip(rows, rows[1:]):
        s = math.dist(p0, p1)
        total += s
        speeds.append(s / ((t1 - t0) * 86400))
    return [("mean_speed", sum(speeds) / len(speeds), 3), ("path_length_au", total / _AU, 4)]


# ---------------------------------------------------------------- GODREJIND.csv (own3)
@q(910210)
def _():
    g = load("GODREJIND.csv")
    rng = (g["High Price"] - g["Low Price"]) / g["Prev Close"] * 100
    return [("correlation", rng.corr(g["Total Traded Quantity"]), 4)]


@alt(910210)
def _():
    g = load("GODREJIND.csv")
    rng = [(h - lo) / p * 100 for h, lo, p in zip(g["High Price"], g["Low Price"], g["Prev Close"])]
    return [("correlation", _h_pearson(rng, g["Total Traded Quantity"]), 4)]


# ---------------------------------------------------------------- YAHOO-BTC_USD_D.csv (own3)
@q(910211)
def _():
    y = load("YAHOO-BTC_USD_D.csv").dropna(subset=["Open", "High", "Low"])
    wide = (y["High"] - y["Low"]) / y["Open"] > 0.10
    return [("wide_range_days", int(wide.sum()), "int")]


@alt(910211)
def _():
    y = load("YAHOO-BTC_USD_D.csv")
    n = 0
    for o, h, lo in zip(y["Open"], y["High"], y["Low"]):
        if o == o and (h - lo) / o > 0.10:
            n += 1
    return [("wide_range_days", n, "int")]


@q(910212)
def _():
    y = load("YAHOO-BTC_USD_D.csv").dropna(subset=["Close"])
    y["log_return"] = np.log(y["Close"]).diff()
    yr = pd.to_datetime(y["Date"]).dt.year
    a = y.loc[yr == 2017, "log_return"].dropna()
    b = y.loc[yr == 2018, "log_return"].dropna()
    return [("ks_statistic", stats.ks_2samp(a, b).statistic, 4)]


@alt(910212)
def _():
    y = load("YAHOO-BTC_USD_D.csv")
    ok = y["Close"].notna().to_numpy()
    c, d = y["Close"].to_numpy()[ok], y["Date"].to_numpy()[ok]
    r = np.log(c[1:] / c[:-1])
    yrs = np.array([s[:4] for s in d[1:]])
    return [("ks_statistic", _h3_ks2(r[yrs == "2017"], r[yrs == "2018"]), 4)]


# ---------------------------------------------------------------- Zip_MedianSoldPricePerSqft_AllHomes.csv (own3)
@q(910213)
def _():
    z = load("Zip_MedianSoldPricePerSqft_AllHomes.csv").sort_values(["RegionName", "Month"])
    f = z.groupby("RegionName")["MedianSoldPricePerSqft"].transform(
        lambda s: s.interpolate(method="linear", limit_area="inside"))
    return [("still_missing", int(f.isna().sum()), "int"), ("mean_price", f.mean(), 2)]


@alt(910213)
def _():
    z = load("Zip_MedianSoldPricePerSqft_AllHomes.csv")
    vals, missing = [], 0
    for _zip, g in z.groupby("RegionName"):
        g = g.sort_values("Month")
        v = g["MedianSoldPricePerSqft"].to_numpy()
        known = np.flatnonzero(~np.isnan(v))
        filled = v.copy()
        if len(known):
            inside = np.arange(known[0], known[-1] + 1)
            filled[inside] = np.interp(inside, known, v[known])
        missing += int(np.isnan(filled).sum())
        vals += list(filled[~np.isnan(filled)])
    return [("still_missing", missing, "int"), ("mean_price", float(np.mean(vals)), 2)]


# ---------------------------------------------------------------- abalone.csv (own3)
def _abalone_split():
    from sklearn.model_selection import train_test_split
    a = load("abalone.csv")
    X = a[["Length", "Diameter", "Height", "Whole weight", "Shell weight"]]
    return train_test_split(X, (a["Sex"] == "I").astype(int), test_size=0.1, random_state=1)


@q(910214)
def _():
    from sklearn.linear_model import LogisticRegression
    Xtr, Xte, ytr, yte = _abalone_split()
    m = LogisticRegression(max_iter=1000).fit(Xtr, ytr)
    margin = np.abs(m.decision_function(Xte)).min()
    if margin < 1e-2:
        UNIQUE_ERRORS.append(f"910214: a test point lies near the decision boundary ({margin})")
    return [("accuracy", (m.predict(Xte) == yte).mean(), 4)]


@alt(910214)
def _():
    from sklearn.linear_model import LogisticRegression
    Xtr, Xte, ytr, yte = _abalone_split()
    z = _h3_logit_fit(Xtr, ytr, Xte)
    # the exact optimum classifies every test point as the sklearn fit of the question does
    assert ((z > 0).astype(int) == LogisticRegression(max_iter=1000).fit(Xtr, ytr).predict(Xte)).all()
    return [("accuracy", ((z > 0).astype(int) == np.asarray(yte)).mean(), 4)]


# ---------------------------------------------------------------- arrest_expungibility.csv (own3)
@q(910215)
def _():
    a = load("arrest_expungibility.csv").dropna(subset=["Count"])
    per_age = a.groupby("Age")["Count"].sum()
    return [("under_18_share", per_age[per_age.index < 18].sum() / per_age.sum(), 4)]


@alt(910215)
def _():
    a = load("arrest_expungibility.csv")
    per: dict = {}
    for age, c in zip(a["Age"], a["Count"]):
        if c == c:
            per[age] = per.get(age, 0.0) + c
    under = sum(v for k, v in per.items() if k < 18)
    return [("under_18_share", under / sum(per.values()), 4)]


# ---------------------------------------------------------------- auto-mpg.csv (own3)
@q(910216)
def _():
    a = load("auto-mpg.csv")
    f = a[a["cylinders"] == 4]
    return [("correlation", f["modelyear"].corr(f["mpg"]), 4)]


@alt(910216)
def _():
    a = load("auto-mpg.csv")
    k = (a["cylinders"] == 4).to_numpy()
    return [("correlation", _h_pearson(a["modelyear"].to_numpy()[k], a["mpg"].to_numpy()[k]), 4)]


def _auto_split():
    from sklearn.model_selection import train_test_split
    a = load("auto-mpg.csv")
    X = a[["mpg", "displacement", "horsepower", "weight", "acceleration"]]
    return train_test_split(X, (a["origin"] == 1).astype(int), test_size=0.25, random_state=2)


@q(910217)
def _():
    from sklearn.linear_model import LogisticRegression
    Xtr, Xte, ytr, yte = _auto_split()
    m = LogisticRegression(max_iter=1000).fit(Xtr, ytr)
    margin = np.abs(m.decision_function(Xte)).min()
    if margin < 1e-2:
        UNIQUE_ERRORS.append(f"910217: a test point lies near the decision boundary ({margin})")
    return [("accuracy", (m.predict(Xte) == yte).mean(), 4)]


@alt(910217)
def _():
    from sklearn.linear_model import LogisticRegression
    Xtr, Xte, ytr, yte = _auto_split()
    m = LogisticRegression(max_iter=10000, solver="newton-cg", tol=1e-10).fit(Xtr, ytr)
    z = _h3_logit_fit(Xtr, ytr, Xte)
    # the fully converged optimum (two solvers) classifies every test point as the lbfgs fit of the question does
    lbfgs = LogisticRegression(max_iter=1000).fit(Xtr, ytr).predict(Xte)
    assert ((z > 0).astype(int) == m.predict(Xte)).all() and (m.predict(Xte) == lbfgs).all()
    return [("accuracy", (m.predict(Xte) == yte).mean(), 4)]


# ---------------------------------------------------------------- baro_2015.csv (own3)
_SECTORS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]


@q(910218)
def _():
    b = load("baro_2015.csv").dropna(subset=[" WINDSPEED"])
    b["sector"] = [_SECTORS[int(((d + 22.5) % 360) // 45)] for d in b[" DIR"]]
    sec, m = top(b.groupby("sector")[" WINDSPEED"].mean(), 910218)
    return [("windiest_sector", sec, "str"), ("mean_wind_speed", m, 2)]


@alt(910218)
def _():
    b = load("baro_2015.csv")
    d = b[" DIR"].to_numpy(float)
    w = b[" WINDSPEED"].to_numpy(float)
    ok = ~np.isnan(w)
    # sectors by explicit bounds: N is [337.5, 360] or [0, 22.5), the others [c - 22.5, c + 22.5)
    centres = np.arange(8) * 45.0
    idx = np.zeros(len(d), int)
    for i, c in enumerate(centres[1:], start=1):
        idx[(d >= c - 22.5) & (d < c + 22.5)] = i
    means = {_SECTORS[i]: w[ok & (idx == i)].mean() for i in range(8)}
    s, m = _h3_argbest(means)
    return [("windiest_sector", s, "str"), ("mean_wind_speed", m, 2)]


# ---------------------------------------------------------------- baseball_data.csv (own3)
_BB_FEATS = ["on_base_percentage", "number_of_runs", "number_of_hits", "number_of_home_runs",
             "number_of_runs_batted_in", "number_of_walks", "indicator_of_free_agency_eligibility",
             "indicator_of_arbitration_eligibility"]


def _bb_split():
    from sklearn.model_selection import train_test_split
    b = load("baseball_data.csv").dropna(subset=_BB_FEATS)
    return train_test_split(b[_BB_FEATS], np.log(b["salary_in_thousands_of_dollars"]), test_size=0.2,
                            random_state=42)


@q(910219)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    Xtr, Xte, ytr, yte = _bb_split()
    return [("r2_score", r2_score(yte, LinearRegression().fit(Xtr, ytr).predict(Xte)), 4)]


@alt(910219)
def _():
    Xtr, Xte, ytr, yte = _bb_split()
    pred, _b = _h_ols(Xtr, ytr, Xte)
    return [("r2_score", _h_r2(yte, pred), 4)]


@q(910220)
def _():
    s = load("baseball_data.csv")["salary_in_thousands_of_dollars"]
    return [("skew_log_salary", stats.skew(np.log(s)), 4)]


@alt(910220)
def _():
    s = load("baseball_data.csv")["salary_in_thousands_of_dollars"].to_numpy(float)
    # the skewness of the log does not depend on the log base
    assert abs(_skew_pop(np.log10(s)) - _skew_pop(np.log(s))) < 1e-12
    return [("skew_log_salary", _skew_pop(np.log(s)), 4)]


# ---------------------------------------------------------------- beauty and the labor market.csv (own3)
@q(910221)
def _():
    w = load("beauty and the labor market.csv")
    chi2 = stats.chi2_contingency(pd.crosstab(w["female"], w["union"]))[0]
    return [("chi2_statistic", chi2, 2)]


@alt(910221)
def _():
    w = load("beauty and the labor market.csv")
    tab = np.zeros((2, 2))
    for f, u in zip(w["female"], w["union"]):
        tab[f, u] += 1
    return [("chi2_statistic", _h_chi2(tab), 2)]


@q(910222)
def _():
    w = load("beauty and the labor market.csv")
    return [("p_value", stats.normaltest(w["lwage"]).pvalue, 4)]


@alt(910222)
def _():
    x = load("beauty and the labor market.csv")["lwage"].to_numpy(float)
    return [("p_value", _h3_normaltest_p(x), 4)]


# ---------------------------------------------------------------- bitconnect_price.csv (own3)
@q(910223)
def _():
    b = load("bitconnect_price.csv")
    vol = b["Volume"].str.replace(",", "").astype(float)
    up, down = b["Close"] > b["Open"], b["Close"] < b["Open"]
    return [("volume_ratio", vol[up].mean() / vol[down].mean(), 4)]


@alt(910223)
def _():
    b = load("bitconnect_price.csv")
    u, d = [], []
    for o, c, v in zip(b["Open"], b["Close"], b["Volume"]):
        v = int(v.replace(",", ""))
        if c > o:
            u.append(v)
        elif c < o:
            d.append(v)
    return [("volume_ratio", (sum(u) / len(u)) / (sum(d) / len(d)), 4)]


# ---------------------------------------------------------------- cost_data_with_errors.csv (own3)
@q(910224)
def _():
    c = load("cost_data_with_errors.csv")
    med = c.groupby("max_storm_cat")["max_sust_wind"].transform("median")
    f = c["max_sust_wind"].fillna(med)
    assert f.notna().all()
    return [("mean_wind", f.mean(), 2)]


@alt(910224)
def _():
    c = load("cost_data_with_errors.csv")
    by: dict = {}
    for k, w in zip(c["max_storm_cat"], c["max_sust_wind"]):
        if w == w:
            by.setdefault(k, []).append(w)
    vals = [w if w == w else _h3_median(by[k]) for k, w in zip(c["max_storm_cat"], c["max_sust_wind"])]
    return [("mean_wind", sum(vals) / len(vals), 2)]


# ---------------------------------------------------------------- country_vaccinations.csv (own3)
@q(910225)
def _():
    c = load("country_vaccinations.csv")
    day, total = top(c.groupby("date")["daily_vaccinations"].sum(), 910225)
    return [("peak_date", day, "str"), ("total_daily_vaccinations", total, "int")]


@alt(910225)
def _():
    c = load("country_vaccinations.csv")
    per: dict = {}
    for d, v in zip(c["date"], c["daily_vaccinations"]):
        if v == v:
            per[d] = per.get(d, 0.0) + v
    d, v = _h3_argbest(per)
    return [("peak_date", d, "str"), ("total_daily_vaccinations", v, "int")]


# ---------------------------------------------------------------- e5_aapl.csv (own3)
@q(910226)
def _():
    e = load("e5_aapl.csv")
    e["Date"] = pd.to_datetime(e["Date"])
    last = e.sort_values("Date").groupby(e["Date"].dt.strftime("%Y-%m"))["Close"].last()
    r = last.pct_change().dropna()
    best, br = top(r, 910226)
    return [("best_month", best, "str"), ("best_return", br, 4)]


@alt(910226)
def _():
    e = load("e5_aapl.csv")
    last: dict = {}
    for d, c in sorted(zip(e["Date"], e["Close"])):
        last[d[:7]] = c
    months = sorted(last)
    r = {m: last[m] / last[p] - 1 for p, m in zip(months, months[1:])}
    b, br = _h3_argbest(r)
    return [("best_month", b, "str"), ("best_return", br, 4)]


# ---------------------------------------------------------------- election2016.csv (own3)
@q(910227)
def _():
    e = load("election2016.csv")
    st = e.groupby("state_abbr")[["votes_dem", "votes_gop", "total_votes"]].sum()
    share = st["votes_dem"] / st["total_votes"]
    s, _v = top(share, 910227, largest=False)
    return [("lowest_dem_state", s, "str"), ("dem_won_states", int((st["votes_dem"] > st["votes_gop"]).sum()), "int")]


@alt(910227)
def _():
    e = load("election2016.csv")
    agg: dict = {}
    for s, d, g, t in zip(e["state_abbr"], e["votes_dem"], e["votes_gop"], e["total_votes"]):
        a = agg.setdefault(s, [0.0, 0.0, 0.0])
        a[0] += d
        a[1] += g
        a[2] += t
    s, _v = _h3_argbest({k: a[0] / a[2] for k, a in agg.items()}, largest=False)
    return [("lowest_dem_state", s, "str"), ("dem_won_states", sum(a[0] > a[1] for a in agg.values()), "int")]


# ---------------------------------------------------------------- estimated_numbers.csv (own3)
@q(910228)
def _():
    e = load("estimated_numbers.csv")
    y = e[e["Year"] == 2017].dropna(subset=["No. of cases_min", "No. of cases_max"])
    y = y.assign(rel_width=(y["No. of cases_max"] - y["No. of cases_min"]) / y["No. of cases_median"])
    reg, _v = top(y.groupby("WHO Region")["rel_width"].mean(), 910228)
    return [("top_region", reg, "str")]


@alt(910228)
def _():
    e = load("estimated_numbers.csv")
    per: dict = {}
    for yr, lo, hi, med, reg in zip(e["Year"], e["No. of cases_min"], e["No. of cases_max"],
                                    e["No. of cases_median"], e["WHO Region"]):
        if yr == 2017 and lo == lo and hi == hi:
            per.setdefault(reg, []).append((hi - lo) / med)
    r, _v = _h3_argbest({k: sum(x) / len(x) for k, x in per.items()})
    return [("top_region", r, "str")]


# ---------------------------------------------------------------- fb_articles_20180822_20180829_df.csv (own3)
@q(910229)
def _():
    f = load("fb_articles_20180822_20180829_df.csv")
    return [("spearman_correlation", stats.spearmanr(f["neg"], f["compound"]).statistic, 4)]


@alt(910229)
def _():
    f = load("fb_articles_20180822_20180829_df.csv")
    return [("spearman_correlation", _h_spearman(f["neg"], f["compound"]), 4)]


# ---------------------------------------------------------------- ferret-Pitt-2-preinf-lib2-100_sitediffsel.csv (own3)
_FERRET = "ferret-Pitt-2-preinf-lib2-100_sitediffsel.csv"


@q(910230)
def _():
    f = load(_FERRET)
    out = np.abs(stats.zscore(f["max_diffsel"])) > 3
    return [("outlier_count", int(out.sum()), "int")]


@alt(910230)
def _():
    f = load(_FERRET)
    return [("outlier_count", _h_zcount(f["max_diffsel"]), "int")]


@q(910231)
def _():
    f = load(_FERRET)
    net = f["positive_diffsel"] + f["negative_diffsel"].fillna(0)
    return [("mean_net_diffsel", net.mean(), 4), ("positive_net_count", int((net > 0).sum()), "int")]


@alt(910231)
def _():
    f = load(_FERRET)
    net = [p + (n if n == n else 0.0) for p, n in zip(f["positive_diffsel"], f["negative_diffsel"])]
    return [("mean_net_diffsel", sum(net) / len(net), 4), ("positive_net_count", sum(x > 0 for x in net), "int")]


# ---------------------------------------------------------------- gapminder_cleaned.csv (own3)
@q(910232)
def _():
    g = load("gapminder_cleaned.csv")
    y = g[g["year"] == 2007].assign(w=lambda d: d["lifeexp"] * d["pop"])
    s = y.groupby("continent")[["w", "pop"]].sum()
    wm = s["w"] / s["pop"]
    return [("africa_weighted_lifeexp", wm["africa"], 2), ("asia_weighted_lifeexp", wm["asia"], 2)]


@alt(910232)
def _():
    g = load("gapminder_cleaned.csv")
    out = []
    for cont in ("africa", "asia"):
        d = g[(g["year"] == 2007) & (g["continent"] == cont)]
        out.append(float(np.average(d["lifeexp"], weights=d["pop"])))
    return [("africa_weighted_lifeexp", out[0], 2), ("asia_weighted_lifeexp", out[1], 2)]


def _gap_split():
    from sklearn.model_selection import train_test_split
    g = load("gapminder_cleaned.csv")
    X = pd.DataFrame({"log_gdp": np.log10(g["gdppercap"]), "year": g["year"]})
    return train_test_split(X, g["lifeexp"], test_size=0.2, random_state=42)


@q(910233)
def _():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score
    Xtr, Xte, ytr, yte = _gap_split()
    m = LinearRegression().fit(Xtr, ytr)
    return [("r2_score", r2_score(yte, m.predict(Xte)), 4)]


@alt(910233)
def _():
    Xtr, Xte, ytr, yte = _gap_split()
    pred, beta = _h_ols(Xtr, ytr, Xte)
    return [("r2_score", _h_r2(yte, pred), 4)]


# ---------------------------------------------------------------- gapminder_gdp_asia.csv (own3)
@q(910234)
def _():
    a = load("gapminder_gdp_asia.csv")
    return [("spearman_correlation", a["gdpPercap_1952"].corr(a["gdpPercap_2007"], method="spearman"), 4)]


@alt(910234)
def _():
    a = load("gapminder_gdp_asia.csv")
    # no ties: the classic formula 1 - 6 sum d^2 / (n (n^2 - 1)) applies
    r1, r2 = _h_ranks(a["gdpPercap_1952"]), _h_ranks(a["gdpPercap_2007"])
    assert len(set(r1)) == len(r1) and len(set(r2)) == len(r2)
    n = len(r1)
    return [("spearman_correlation", 1 - 6 * ((r1 - r2) ** 2).sum() / (n * (n * n - 1)), 4)]


# ---------------------------------------------------------------- hotel_data.csv (own3)
@q(910235)
def _():
    h = load("hotel_data.csv")
    h["branded"] = h["brand_name"].notna()
    g = h.groupby("city_name")["branded"].agg(["size", "mean"])
    city, _share = top(g.loc[g["size"] >= 10, "mean"], 910235)
    return [("top_city", city, "str")]


@alt(910235)
def _():
    h = load("hotel_data.csv")
    n: dict = {}
    b: dict = {}
    for c, br in zip(h["city_name"], h["brand_name"]):
        n[c] = n.get(c, 0) + 1
        b[c] = b.get(c, 0) + isinstance(br, str)
    c, _s = _h3_argbest({k: b[k] / n[k] for k in n if n[k] >= 10})
    return [("top_city", c, "str")]


@q(910236)
def _():
    h = load("hotel_data.csv")
    k = h["brand_name"].notna()
    u = stats.mannwhitneyu(h.loc[k, "review_count"], h.loc[~k, "review_count"]).statistic
    return [("probability_of_superiority", u / (k.sum() * (~k).sum()), 4)]


@alt(910236)
def _():
    h = load("hotel_data.csv")
    k = h["brand_name"].notna().to_numpy()
    r = h["review_count"].to_numpy(float)
    a, b = r[k], r[~k]
    # direct pair count: P(branded > unbranded) + 0.5 * P(tie)
    gt = (a[:, None] > b[None, :]).sum() + 0.5 * (a[:, None] == b[None, :]).sum()
    u1, _p = _h_mwu(a, b)
    assert abs(gt - u1) < 1e-6
    return [("probability_of_superiority", gt / (len(a) * len(b)), 4)]


# ---------------------------------------------------------------- imp.score.ldlr.metabolome.csv (own3)
@q(910237)
def _():
    m = load("imp.score.ldlr.metabolome.csv")
    name, n = top(m["standard_indentification_level_1"].value_counts(), 910237)
    return [("top_compound", name, "str"),
            ("mean_importance", m.loc[m["standard_indentification_level_1"] == name, "importance.score"].mean(), 6)]


@alt(910237)
def _():
    m = load("imp.score.ldlr.metabolome.csv")
    per: dict = {}
    for c, s in zip(m["standard_indentification_level_1"], m["importance.score"]):
        if isinstance(c, str):
            per.setdefault(c, []).append(s)
    c, n = _h3_argbest({k: len(v) for k, v in per.items()})
    return [("top_compound", c, "str"), ("mean_importance", sum(per[c]) / len(per[c]), 6)]


# ---------------------------------------------------------------- insurance.csv (own3)
@q(910238)
def _():
    i = load("insurance.csv")
    return [("p_value", stats.chi2_contingency(pd.crosstab(i["region"], i["smoker"]))[1], 4)]


@alt(910238)
def _():
    i = load("insurance.csv")
    regions = sorted(set(i["region"]))
    tab = np.zeros((len(regions), 2))
    for r, s in zip(i["region"], i["smoker"]):
        tab[regions.index(r), int(s == "yes")] += 1
    return [("p_value", _h3_chi2_p(tab), 4)]


# ---------------------------------------------------------------- microsoft.csv (own3)
@q(910239)
def _():
    m = load("microsoft.csv")
    m["Date"] = pd.to_datetime(m["Date"], format="%d-%b-%y")
    r = m.sort_values("Date")["Close"].pct_change().dropna()
    return [("skewness", stats.skew(r), 4), ("kurtosis", stats.kurtosis(r), 4)]


@alt(910239)
def _():
    m = load("microsoft.csv")
    # the file runs from the newest to the oldest day: reverse it
    assert pd.to_datetime(m["Date"], format="%d-%b-%y").is_monotonic_decreasing
    c = m["Close"].to_numpy()[::-1]
    r = c[1:] / c[:-1] - 1
    return [("skewness", _skew_pop(r), 4), ("kurtosis", _kurt_pop(r), 4)]


# ---------------------------------------------------------------- my_test_01.csv (own3)
@q(910240)
def _():
    t = load("my_test_01.csv")
    return [("correlation", (t["AveBedrms"] / t["AveRooms"]).corr(t["MedianHouseValue"]), 4)]


@alt(910240)
def _():
    t = load("my_test_01.csv")
    return [("correlation", _h_pearson(t["AveBedrms"].to_numpy() / t["AveRooms"].to_numpy(),
                                       t["MedianHouseValue"]), 4)]


@q(910241)
def _():
    t = load("my_test_01.csv")
    return [("outlier_count", int((np.abs(stats.zscore(t["AveOccup"])) > 3).sum()), "int")]


@alt(910241)
def _():
    return [("outlier_count", _h_zcount(load("my_test_01.csv")["AveOccup"]), "int")]


# ---------------------------------------------------------------- oecd_education_spending.csv (own3)
@q(910242)
def _():
    o = load("oecd_education_spending.csv")
    t = o[o["SUBJECT"] == "TRY"].pivot(index="LOCATION", columns="TIME", values="Value")
    ch = (t[2013] - t[2012]).dropna()
    loc, _v = top(ch, 910242, rel_gap=1e-3)
    return [("top_location", loc, "str")]


@alt(910242)
def _():
    o = load("oecd_education_spending.csv")
    v: dict = {}
    for loc, s, t, x in zip(o["LOCATION"], o["SUBJECT"], o["TIME"], o["Value"]):
        if s == "TRY" and x == x:
            v[(loc, t)] = x
    ch = {loc: v[(loc, 2013)] - v[(loc, 2012)] for loc, t in v if t == 2012 and (loc, 2013) in v}
    loc, _d = _h3_argbest(ch)
    return [("top_location", loc, "str")]


# ---------------------------------------------------------------- percent-bachelors-degrees-women-usa.csv (own3)
@q(910243)
def _():
    p = load("percent-bachelors-degrees-women-usa.csv")
    peak = int(p.loc[p["Computer Science"].idxmax(), "Year"])
    assert (p["Computer Science"] == p["Computer Science"].max()).sum() == 1
    s = p[p["Year"] >= peak]
    slope = stats.linregress(s["Year"], s["Computer Science"]).slope
    return [("peak_year", peak, "int"), ("slope", slope, 4)]


@alt(910243)
def _():
    p = load("percent-bachelors-degrees-women-usa.csv")
    y, c = p["Year"].to_numpy(float), p["Computer Science"].to_numpy(float)
    peak = int(y[np.argmax(c)])
    k = y >= peak
    slope = np.polyfit(y[k], c[k], 1)[0]
    return [("peak_year", peak, "int"), ("slope", slope, 4)]


# ---------------------------------------------------------------- ravenna_250715.csv (own3)
@q(910244)
def _():
    r = load("ravenna_250715.csv")
    when, _t = top(r.set_index("day")["temp"], 910244, largest=False)
    return [("coldest_time", when, "str")]


@alt(910244)
def _():
    r = load("ravenna_250715.csv")
    pairs = sorted(zip(r["temp"], r["day"]))
    return [("coldest_time", pairs[0][1], "str")]


# ---------------------------------------------------------------- test_Y3wMUE5_7gLdaTN.csv (own3)
_LOAN = "test_Y3wMUE5_7gLdaTN.csv"


@q(910245)
def _():
    l = load(_LOAN)
    l["LoanAmount"] = l["LoanAmount"].fillna(l.groupby("Property_Area")["LoanAmount"].transform("median"))
    l["ratio"] = l["LoanAmount"] * 1000 / (l["ApplicantIncome"] + l["CoapplicantIncome"])
    area, _r = top(l.groupby("Property_Area")["ratio"].mean(), 910245)
    return [("mean_loan_amount", l["LoanAmount"].mean(), 3), ("top_area", area, "str")]


@alt(910245)
def _():
    l = load(_LOAN)
    by: dict = {}
    for a, x in zip(l["Property_Area"], l["LoanAmount"]):
        if x == x:
            by.setdefault(a, []).append(x)
    amounts, ratios = [], {}
    for a, x, ai, ci in zip(l["Property_Area"], l["LoanAmount"], l["ApplicantIncome"], l["CoapplicantIncome"]):
        x = x if x == x else _h3_median(by[a])
        amounts.append(x)
        ratios.setdefault(a, []).append(x * 1000 / (ai + ci))
    a, _r = _h3_argbest({k: sum(v) / len(v) for k, v in ratios.items()})
    return [("mean_loan_amount", sum(amounts) / len(amounts), 3), ("top_area", a, "str")]


@q(910246)
def _():
    d = load(_LOAN)["Dependents"].replace("3+", "3").astype(float)
    return [("mean_dependents", d.mean(), 4)]


@alt(910246)
def _():
    v = [int(s.rstrip("+")) for s in load(_LOAN)["Dependents"] if isinstance(s, str)]
    return [("mean_dependents", sum(v) / len(v), 4)]


# ---------------------------------------------------------------- test_x.csv (own3)
@q(910247)
def _():
    x = load("test_x.csv")
    t, _s = top(x.groupby("Title")["IsAlone"].mean(), 910247)
    return [("top_title", t, "int")]


@alt(910247)
def _():
    x = load("test_x.csv")
    n: dict = {}
    a: dict = {}
    for t, i in zip(x["Title"], x["IsAlone"]):
        n[t] = n.get(t, 0) + 1
        a[t] = a.get(t, 0) + i
    t, _s = _h3_argbest({k: a[k] / n[k] for k in n})
    return [("top_title", t, "int")]


# ---------------------------------------------------------------- titanic.csv (own3)
@q(910248)
def _():
    t = load("titanic.csv")
    t["HasCabin"] = t["Cabin"].notna().astype(int)
    rate = t.groupby("HasCabin")["Survived"].mean()
    chi2 = stats.chi2_contingency(pd.crosstab(t["HasCabin"], t["Survived"]))[0]
    return [("survival_rate_cabin", rate[1], 3), ("chi2_statistic", chi2, 2)]


@alt(910248)
def _():
    t = load("titanic.csv")
    tab = np.zeros((2, 2))
    for c, s in zip(t["Cabin"], t["Survived"]):
        tab[int(isinstance(c, str)), s] += 1
    return [("survival_rate_cabin", tab[1, 1] / tab[1].sum(), 3), ("chi2_statistic", _h_chi2(tab), 2)]


# ---------------------------------------------------------------- titanic_test.csv (own3)
@q(910249)
def _():
    t = load("titanic_test.csv")
    t["Age"] = t["Age"].fillna(t.groupby(["Pclass", "Sex"])["Age"].transform("median"))
    f = stats.f_oneway(*[g["Age"] for _k, g in t.groupby("Pclass")]).statistic
    return [("mean_age", t["Age"].mean(), 2), ("f_statistic", f, 2)]


@alt(910249)
def _():
    t = load("titanic_test.csv")
    by: dict = {}
    for c, s, a in zip(t["Pclass"], t["Sex"], t["Age"]):
        if a == a:
            by.setdefault((c, s), []).append(a)
    ages = [a if a == a else _h3_median(by[(c, s)]) for c, s, a in zip(t["Pclass"], t["Sex"], t["Age"])]
    cls = t["Pclass"].to_numpy()
    ages = np.array(ages)
    return [("mean_age", ages.mean(), 2), ("f_statistic", _h3_anova_f([ages[cls == k] for k in (1, 2, 3)]), 2)]


# ---------------------------------------------------------------- titanic_train.csv (own3)
@q(910250)
def _():
    t = load("titanic_train.csv").dropna(subset=["Age"])
    p = stats.mannwhitneyu(t.loc[t["Survived"] == 1, "Age"], t.loc[t["Survived"] == 0, "Age"]).pvalue
    return [("p_value", p, 4)]


@alt(910250)
def _():
    t = load("titanic_train.csv")
    ok = t["Age"].notna().to_numpy()
    a, s = t["Age"].to_numpy()[ok], t["Survived"].to_numpy()[ok]
    _u, p = _h_mwu(a[s == 0], a[s == 1])
    return [("p_value", p, 4)]


# ---------------------------------------------------------------- tr_eikon_eod_data.csv (own3)
@q(910251)
def _():
    e = load("tr_eikon_eod_data.csv").dropna(subset=["EUR=", "XAU="])
    return [("correlation", e["EUR="].corr(e["XAU="]), 4)]


@alt(910251)
def _():
    e = load("tr_eikon_eod_data.csv")
    a, b = e["EUR="].to_numpy(), e["XAU="].to_numpy()
    ok = ~np.isnan(a) & ~np.isnan(b)
    return [("correlation", _h_pearson(a[ok], b[ok]), 4)]


# ---------------------------------------------------------------- traj-Osak.csv (own3)
@q(910252)
def _():
    s = load("traj-Osak.csv")["poiDuration"]
    lo, hi = iqr_bounds(s)
    return [("outlier_count", int(((s < lo) | (s > hi)).sum()), "int")]


@alt(910252)
def _():
    return [("outlier_count", int(_h3_iqr_out(load("traj-Osak.csv")["poiDuration"]).sum()), "int")]


# ---------------------------------------------------------------- tree.csv (own3)
@q(910253)
def _():
    t = load("tree.csv")
    z = t.groupby("SCIENTIFIC_NAME")["HT_M"].transform(lambda s: (s - s.mean()) / s.std(ddof=0))
    return [("outlier_count", int((z.abs() > 3).sum()), "int")]


@alt(910253)
def _():
    t = load("tree.csv")
    n = 0
    for _sp, g in t.groupby("SCIENTIFIC_NAME"):
        h = g["HT_M"].to_numpy(float)
        if len(h) < 2 or _h3_std(h) == 0:
            continue
        z0 = np.abs(h - h.mean()) / _h3_std(h, 0)
        z1 = np.abs(h - h.mean()) / _h3_std(h, 1)
        assert ((z0 > 3) == (z1 > 3)).all()  # ddof makes no difference here
        n += int((z0 > 3).sum())
    return [("outlier_count", n, "int")]


# ---------------------------------------------------------------- unemployement_industry.csv (own3)
@q(910254)
def _():
    u = load("unemployement_industry.csv").dropna(subset=["Mar.2019", "Mar.2020"])
    u = u[u["Mar.2019"] >= 100]
    pct = (u["Mar.2020"] / u["Mar.2019"] - 1) * 100
    name, _v = top(pd.Series(pct.to_numpy(), index=u["Industry and class of worker"]), 910254)
    return [("top_industry", name, "str")]


@alt(910254)
def _():
    u = load("unemployement_industry.csv")
    per = {n: 100 * (b - a) / a for n, a, b in zip(u["Industry and class of worker"], u["Mar.2019"], u["Mar.2020"])
           if a == a and b == b and a >= 100}
    n, _v = _h3_argbest(per)
    return [("top_industry", n, "str")]


# ---------------------------------------------------------------- veracruz 2016.csv (own3)
@q(910255)
def _():
    v = load("veracruz 2016.csv")
    h, _m = top(v.groupby(v["Unnamed: 0"] % 24)["Full"].mean(), 910255)
    return [("peak_hour", h, "int")]


@alt(910255)
def _():
    v = load("veracruz 2016.csv")
    f = v["Full"].to_numpy()
    assert (v["Unnamed: 0"].to_numpy() == np.arange(len(f))).all() and len(f) % 24 == 0
    means = f.reshape(-1, 24).mean(axis=0)
    return [("peak_hour", int(np.argmax(means)), "int")]


@q(910256)
def _():
    r = load("veracruz 2016.csv")["Residential"]
    return [("skewness", stats.skew(r), 4), ("kurtosis", stats.kurtosis(r), 4)]


@alt(910256)
def _():
    r = load("veracruz 2016.csv")["Residential"].to_numpy()
    return [("skewness", _skew_pop(r), 4), ("kurtosis", _kurt_pop(r), 4)]


# ---------------------------------------------------------------- weather_data_1864.csv (own3)
@q(910257)
def _():
    w = load("weather_data_1864.csv")
    w["freezing"] = w["TMAX_F"] < 32
    st, _share = top(w.groupby("station")["freezing"].mean(), 910257)
    return [("coldest_station", st, "str")]


@alt(910257)
def _():
    w = load("weather_data_1864.csv")
    n: dict = {}
    f: dict = {}
    for s, t in zip(w["station"], w["obs_value"]):
        n[s] = n.get(s, 0) + 1
        f[s] = f.get(s, 0) + (t < 0)  # TMAX_F < 32 F is the same as obs_value (deg C) < 0
    assert ((w["TMAX_F"] < 32) == (w["obs_value"] < 0)).all()
    s, _sh = _h3_argbest({k: f[k] / n[k] for k in n})
    return [("coldest_station", s, "str")]


# ---------------------------------------------------------------- weather_train.csv (own3)
@q(910258)
def _():
    w = load("weather_train.csv")
    month = pd.to_datetime(w["time"]).dt.month
    a = w.loc[month == 1, "temperature"].dropna()
    b = w.loc[month == 2, "temperature"].dropna()
    return [("ks_statistic", stats.ks_2samp(a, b).statistic, 4)]


@alt(910258)
def _():
    w = load("weather_train.csv")
    t = w["temperature"].to_numpy()
    m = np.array([s[5:7] for s in w["time"]])
    ok = ~np.isnan(t)
    return [("ks_statistic", _h3_ks2(t[ok & (m == "01")], t[ok & (m == "02")]), 4)]


@q(910259)
def _():
    s = load("weather_train.csv")["wind speed"].dropna()
    lo, hi = iqr_bounds(s)
    return [("outlier_count", int(((s < lo) | (s > hi)).sum()), "int")]


@alt(910259)
def _():
    s = load("weather_train.csv")["wind speed"].to_numpy()
    return [("outlier_count", int(_h3_iqr_out(s[~np.isnan(s)]).sum()), "int")]


# ---------------------------------------------------------------- well_2_complete.csv (own3)
@q(910260)
def _():
    w = load("well_2_complete.csv")
    rho = w["RHO"].fillna(w["RHO_OLD"])
    return [("mean_rho", rho.mean(), 4), ("correlation", rho.corr(w["NPHI"]), 4)]


@alt(910260)
def _():
    w = load("well_2_complete.csv")
    rho = [r if r == r else o for r, o in zip(w["RHO"], w["RHO_OLD"])]
    return [("mean_rho", sum(rho) / len(rho), 4), ("correlation", _h_pearson(rho, w["NPHI"]), 4)]


# ---------------------------------------------------------------- driver
def compute(qid: int) -> list[list[str]]:
    return [[n, fmt(v, s)] for n, v, s in Q[qid]()]


def boundary_problems(qid: int) -> list[str]:
    probs = []
    for n, v, s in Q[qid]():
        if isinstance(s, int):
            x = abs(float(v)) * 10 ** s
            if abs((x % 1) - 0.5) < 0.05:
                probs.append(f"{qid} {n}: {v!r} is within 5% of a rounding unit of a rounding boundary")
    return probs


def check_set(path: Path, ids_expected: set[int]) -> tuple[list[str], str]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    bad = []
    ids = [r["id"] for r in rows]
    if sorted(ids) != sorted(ids_expected):
        bad.append(f"{path.name}: ids in jsonl and reference differ: {sorted(set(ids) ^ ids_expected)}")
    for r in rows:
        qid = r["id"]
        if qid not in Q:
            continue
        try:
            got = compute(qid)
        except Exception as e:  # noqa: BLE001
            bad.append(f"{qid}: error {e!r}")
            continue
        if dict(map(tuple, got)) != dict(map(tuple, r["answers"])) or len(got) != len(r["answers"]):
            bad.append(f"{qid}: stored {r['answers']} recomputed {got}")
        names_in_format = set(__import__("re").findall(r"@(\w+)\[", r["format"]))
        if names_in_format != {n for n, _ in r["answers"]}:
            bad.append(f"{qid}: format names {sorted(names_in_format)} != answer names")
        bad += boundary_problems(qid)
        if qid in ALT:
            a = [[n, fmt(v, s)] for n, v, s in ALT[qid]()]
            if a != got:
                bad.append(f"{qid}: independent recomputation differs: {a} vs {got}")
    summary = (f"{path.stem.replace('dabench_', '')}: {len(rows)} questions, "
               f"{sum(len(r['answers']) for r in rows)} sub-answers, "
               f"{sum(q in ALT for q in ids)} with an independent recomputation")
    return bad, summary


def main() -> int:
    bad, summaries = [], []
    for path, lo, hi in SETS:
        b, s = check_set(path, {i for i in Q if lo <= i <= hi})
        bad += b
        summaries.append(s)
    bad += sorted(set(UNIQUE_ERRORS))
    if bad:
        print("\n".join(bad))
        return 1
    print("ok (" + "; ".join(summaries) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
