"""A chart reads as a clinician would write it, in the shapes real exports take (tests/fixtures/real_shapes/chart_fhir
and chart_omop, written by make_real_shapes.py): a death ends the chart, every value recorded together is shown, a
reading without a value hides none, statuses, orders not to give, ended facts, paired blood pressures, questions and
notes read as they mean."""
import json
import shutil

import pytest
import yaml

from conftest import ROOT, run_cli

SHAPES = ROOT / "tests" / "fixtures" / "real_shapes"


def chart(shape):
    from carebench.adapters.load import load_dataset
    config = SHAPES / shape / "config.yaml"
    ds = load_dataset(config)
    return ds, dict(ds.patients[0].snapshot)


@pytest.fixture(scope="module")
def fhir():
    return chart("chart_fhir")


@pytest.fixture(scope="module")
def omop():
    return chart("chart_omop")


def test_a_death_ends_the_chart_and_the_summary_says_so(fhir, omop):
    for ds, snap in (fhir, omop):
        assert snap["summary"].startswith("37-year-old male, died 2011-03.")        # not 46 (his last record, 2021)
        assert any("died; each is charted as of the date of death" in n for n in ds.provenance["notes"])
    assert "encounters" not in fhir[1]                                                # the record after his death
    assert omop[1]["labs"] == ("Blood pressure 128/82 mmHg (2011-02)",)             # paired; the 2012 one left out


def test_every_value_at_the_newest_time_is_shown_and_tests_named_alike_stay_apart(fhir):
    labs = fhir[1]["labs"]
    assert ("HIV medication used for treatment: Efavirenz; Emtricitabine / tenofovir disoproxil; Zidovudine (2010-06)"
            in labs)
    assert "BMI 31.2 kg/m² (2010-06)" in labs and "BMI 65 % (2010-06)" in labs


def test_a_reading_without_a_value_never_hides_one(fhir):
    labs = fhir[1]["labs"]
    assert "Oxygen saturation 77 % (2011-02; 1 more reading without a value)" in labs
    assert "Total score [AUDIT-C]: not recorded (asked but declined) (2010-06)" in labs


def test_statuses_orders_and_events_read_as_they_mean(fhir, omop):
    snap = fhir[1]
    assert snap["allergies"] == ("Penicillin G, inactive (2006-01)",)
    assert snap["medication_history"] == ("Ceftriaxone 1000 MG Injection, given (2011-02)",
                                          "Abacavir 300 MG Oral Tablet, not to be given (2010-06)",
                                          "Emtricitabine 200 MG / Tenofovir 300 MG Oral Tablet, dispensed (2010-06)")
    assert snap["family_history"] == ("Mother: Malignant neoplasm of breast (onset at 45 years) (2008-01)",)
    assert snap["questionnaires"] == ("Do you feel safe at home?: Yes; Drinks per week: 2 (2010-06)",)
    assert omop[1]["medical_history"] == ("Acute pharyngitis, resolved (2010-01)", "Essential hypertension (2005-04)")
    assert omop[1]["medication_history"] == ("Simvastatin 10 MG Oral Tablet, stopped (2010-05)",)


def test_units_text_routing_notes_and_plans(fhir):
    ds, snap = fhir
    assert {"PULSE 142.38 beats/minute (2011-02)", "Body temperature 35.535 °C (2011-02)",
            "pH of Arterial blood 7.33 (2011-02)", "Number of pregnancies of partner 3 (2010-06)"} <= set(snap["labs"])
    assert snap["social_history"] == ("Living situation: Lives with partner.\nWorks nights. (2010-06)",)
    assert snap["notes"] == ("History and physical note: Follow-up visit. Adherent to therapy; viral load "
                             "undetectable. (2010-06)",)                               # one note, not ×2
    assert snap["care_plans"] == ("Care plan: Antiretroviral therapy & follow-up in 3 months (2010-06)",)
    assert "FHIR: 1 note(s) that another resource holds on the same date shown once" in ds.provenance["notes"]


def test_the_item_named_with_its_semantic_tag_is_withheld_from_its_own_chart(fhir):
    ds, snap = fhir
    assert "medical_history" not in snap                                            # the HIV condition: withheld
    assert ds.provenance["leakage"]["leaking_pairs"] == 0


def test_a_question_without_an_answer_is_left_out_and_counted_unless_shown(omop, tmp_path):
    ds, snap = omop
    assert snap["social_history"] == ("Smoker (2010-05)",)                         # a finding needs no value
    assert any(n.startswith("OMOP: 1 observation(s) of a question without an answer") for n in ds.provenance["notes"])
    folder = shutil.copytree(SHAPES / "chart_omop", tmp_path / "omop")
    cfg = yaml.safe_load((folder / "config.yaml").read_text())
    cfg["dataset"]["snapshot"] = {"unanswered": "show"}
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    from carebench.adapters.load import load_dataset
    shown = dict(load_dataset(folder / "config.yaml").patients[0].snapshot)
    assert shown["social_history"] == ("Have you ever smoked?: no answer recorded (2010-05)", "Smoker (2010-05)")


def test_an_unreadable_resource_suggests_leaving_it_out(tmp_path):
    folder = shutil.copytree(SHAPES / "chart_fhir", tmp_path / "fhir")
    bundle = json.loads((folder / "fhir" / "c03.json").read_text())
    plan = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "CarePlan")
    del plan["text"]                                                    # nothing left to name the plan by
    (folder / "fhir" / "c03.json").write_text(json.dumps(bundle))
    r = run_cli("validate", folder / "config.yaml")
    assert r.returncode != 0 and "`dataset.on_invalid: skip` leaves such a resource out" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_chart_with_nothing_to_show_is_an_error_naming_the_patient(tmp_path):
    folder = shutil.copytree(SHAPES / "chart_fhir", tmp_path / "fhir")
    bundle = json.loads((folder / "fhir" / "c03.json").read_text())
    bundle["entry"] = [e for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient"]
    (folder / "fhir" / "c03.json").write_text(json.dumps(bundle))
    r = run_cli("validate", folder / "config.yaml")
    assert r.returncode != 0 and "the snapshot of patient 'c03'" in r.stderr and "is empty" in r.stderr, r.stderr


def test_the_input_page_flags_what_a_clinician_would(tmp_path):
    "A woman's chart with a prostate finding and a note addressing her as Mr., a temperature in kg: reported, unchanged."
    from carebench.adapters.chart.checks import chart_warnings
    from carebench.adapters.load import load_dataset
    folder = shutil.copytree(SHAPES / "chart_fhir", tmp_path / "fhir")
    bundle = json.loads((folder / "fhir" / "c03.json").read_text())
    me = bundle["entry"][0]["resource"]
    me["gender"] = "female"
    subj = {"reference": bundle["entry"][0]["fullUrl"]}
    add = lambda r: bundle["entry"].append({"resource": {"id": f"x{len(bundle['entry'])}", "subject": subj, **r}})
    add({"resourceType": "Condition", "onsetDateTime": "2009-01-01", "code": {"text": "Benign prostatic hyperplasia"}})
    add({"resourceType": "Observation", "status": "final", "effectiveDateTime": "2011-02-02", "code": {"coding": [
        {"system": "http://loinc.org", "code": "8310-5", "display": "Body temperature"}]},
         "valueQuantity": {"value": 36.6, "unit": "kg"}})
    add({"resourceType": "DocumentReference", "status": "current", "date": "2011-02-02T09:00:00Z", "type": {"text": "Note"},
         "content": [{"attachment": {"contentType": "text/plain", "data": "TXIuIFJvZSBzZWVuIHRvZGF5Lg=="}}]})
    (folder / "fhir" / "c03.json").write_text(json.dumps(bundle))
    ds = load_dataset(folder / "config.yaml")
    kinds = sorted((w.field, w.kind, w.term) for w in chart_warnings(ds))
    assert kinds == [("labs", "a unit that does not fit its test", "kg"),
                     ("medical_history", "a finding a female patient cannot have", "prostat"),
                     ("notes", "a note addressing a female patient as Mr.", "mr")]
    assert "Benign prostatic hyperplasia (2009-01)" in dict(ds.patients[0].snapshot)["medical_history"]   # unchanged
