"""Reference answers for dabench_own1.jsonl (60 DABench-form questions on the DABench dev tables).

Run from the repository root:

    .venv/bin/python bench/data/own_tables/reference.py

It recomputes every answer from the tables, formats it as the question's format asks, compares it with the
`answers` stored in dabench_own1.jsonl and prints `ok` (exit 0) or the mismatches (exit 1).

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


def main() -> int:
    rows = [json.loads(line) for line in JSONL.read_text().splitlines() if line.strip()]
    bad = []
    ids = [r["id"] for r in rows]
    if sorted(ids) != sorted(Q):
        bad.append(f"ids in jsonl and reference differ: {sorted(set(ids) ^ set(Q))}")
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
    bad += sorted(set(UNIQUE_ERRORS))
    if bad:
        print("\n".join(bad))
        return 1
    print(f"ok ({len(rows)} questions, {sum(len(r['answers']) for r in rows)} sub-answers, "
          f"{sum(q in ALT for q in ids)} with an independent recomputation)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
