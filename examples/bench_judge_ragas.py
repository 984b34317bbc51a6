# Regenerates examples/bench_judge_ragas.json (the bench's model of ragas' prompts):
#   pip download --no-deps ragas==0.4.3 -d /tmp/ragas && unzip -qo /tmp/ragas/ragas-0.4.3-py3-none-any.whl -d /tmp/ragas/src
#   python3 examples/bench_judge_ragas.py > examples/bench_judge_ragas.json   (needs pydantic 2)
# Renders ragas 0.4.3's prompts for faithfulness, context precision, context
# recall and answer relevancy exactly as PydanticPrompt.to_string does, from
# the wheel's own source (metric modules imported with the rest of ragas
# stubbed), and writes each prompt's static part (everything before the
# sample's input) and its input model's field order.
import importlib.util, json, sys, types

SRC = "/tmp/ragas/src"

class Meta(type):
    def __getattr__(cls, name):
        if name.startswith("__"): raise AttributeError(name)
        return Anything
    def __getitem__(cls, item): return cls

class Anything(metaclass=Meta):
    def __init__(self, *a, **k): pass
    def __getattr__(self, name): return Anything()
    def __call__(self, *a, **k): return Anything()
    def __class_getitem__(cls, item): return cls
    def __mro_entries__(self, bases): return (object,)

class Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"): raise AttributeError(name)
        return Anything

class PydanticPrompt:
    def __class_getitem__(cls, item): return cls

for name in ["ragas", "ragas.dataset_schema", "ragas.metrics", "ragas.metrics.base",
             "ragas.metrics.utils", "ragas.prompt", "ragas.run_config", "ragas.utils",
             "ragas.embeddings", "ragas.embeddings.base", "ragas.llms", "ragas.llms.base",
             "ragas.metrics._string", "ragas.callbacks", "ragas.losses", "ragas.cache",
             "langchain_core", "langchain_core.callbacks", "numpy"]:
    sys.modules[name] = Stub(name)
sys.modules["ragas.prompt"].PydanticPrompt = PydanticPrompt

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, f"{SRC}/ragas/metrics/{path}")
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    try:
        spec.loader.exec_module(m)
    except Exception as e:
        print(f"# {path}: {type(e).__name__}: {e}", file=sys.stderr)
    return m

def static(p):
    # PydanticPrompt.to_string up to the input (ragas/prompt/pydantic_prompt.py).
    sig = ("Please return the output in a JSON format that complies with the "
           "following schema as specified in JSON Schema:\n"
           f"{json.dumps(p.output_model.model_json_schema())}"
           "Do not use single quotes in your response but double quotes,"
           "properly escaped with a backslash.")
    ex = ""
    if p.examples:
        parts = []
        for i, (inp, out) in enumerate(p.examples):
            parts.append(f"Example {i + 1}\n" + "Input: " + inp.model_dump_json(indent=4) + "\n" + "Output: " + out.model_dump_json(indent=4))
        ex = "\n--------EXAMPLES-----------\n" + "\n\n".join(parts)
    return (f"{p.instruction}\n" + sig + "\n" + ex + "\n-----------------------------\n"
            + "\nNow perform the same with the following input\n")

f = load("_faithfulness.py", "faith")
cp = load("_context_precision.py", "cprec")
cr = load("_context_recall.py", "crec")
ar = load("_answer_relevance.py", "arel")
prompts = {
    "statements": (f.StatementGeneratorPrompt, ["question", "answer"]),
    "nli": (f.NLIStatementPrompt, ["context", "statements"]),
    "context_precision": (cp.ContextPrecisionPrompt, list(cp.QAC.model_fields)),
    "context_recall": (cr.ContextRecallClassificationPrompt, list(cr.QCA.model_fields)),
    "answer_relevancy": (ar.ResponseRelevancePrompt, list(ar.ResponseRelevanceInput.model_fields)),
}
out = {"ragas": "0.4.3", "source": "ragas-0.4.3-py3-none-any.whl, ragas/prompt/pydantic_prompt.py to_string, ragas/metrics/{_faithfulness,_context_precision,_context_recall,_answer_relevance}.py",
       "prompts": {k: {"static": static(p), "fields": fields} for k, (p, fields) in prompts.items()}}
json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
