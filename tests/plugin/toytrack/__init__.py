"""A toy track of another package: a base-rate scorer nudged by the chart's patient. It registers its section, its job
and its own report page through the `carebench.tracks` entry point; CAREBench names it nowhere."""
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from carebench.core.executors import Job
from carebench.core.vocab import CONTEXT_FREE, CORRECT_CONTEXT, SHUFFLED_CONTEXT
from carebench.tracks.track import Merged, Track, register_track


@dataclass(frozen=True)
class ToySettings:
    enabled: bool = False
    nudge: float = 0.1


def toy_job(ctx, out_file) -> dict:
    "Context-free: the training base rate per category; with a chart: nudged by ±nudge, by the chart's patient."
    ds, s = ctx.ds, ctx.config.toy
    rate = np.nan_to_num(ds.train_y.mean(0), nan=0.5)
    nudge = {p: s.nudge * ((sum(map(ord, p)) % 3) - 1) for p in ds.patient_ids}
    rows = [r for pid, item in zip(ds.pair_patient, ds.pair_item)
            for r in [(CONTEXT_FREE, pid, item, "", rate), (CORRECT_CONTEXT, pid, item, pid, rate + nudge[pid])]]
    rows += [(SHUFFLED_CONTEXT, d.patient_id, d.item, d.donor_patient_id, rate + nudge[d.donor_patient_id])
             for d in ctx.donors.itertuples()]
    df = pd.DataFrame([dict(model="toy", condition=c, patient_id=p, item=i, category=k,
                            score=float(np.clip(v[j], 0, 1)), context_patient_id=cp)
                       for c, p, i, cp, v in rows for j, k in enumerate(ds.categories)])
    df.to_csv(out_file, index=False)
    return {"model": "toy", "rows": len(df)}


@register_track
class ToyTrack(Track):
    name, title, section, order = "toy", "A toy track", ToySettings, 90
    pages = (("toy", "Toy track", "toytrack:toy_page.ipynb"),)       # a notebook this package ships beside its module

    def model_names(self): return ["toy"]
    def jobs(self, run_path, quiet=True): return [Job("toy", toy_job, (self.ctx, Path(run_path) / "toy.csv"))]
    def merge(self, run, stats):
        return Merged([pd.read_csv(run.path / "toy.csv", dtype=str, keep_default_na=False)], {"toy": stats[0]})
