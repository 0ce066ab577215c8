"""`hierplan models`: the embedded models, which are installed, and how to install the others."""

from __future__ import annotations

import argparse
import json


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("models", help="list the embedded models and which are installed")
    p.add_argument("--json", action="store_true", help="one JSON object per model")
    p.set_defaults(func=cmd_models)
    return p


def cmd_models(args: argparse.Namespace) -> int:
    from hierplan.models import catalog
    from hierplan.models.loader import ENGINE_EXTRAS, missing_modules

    engine_missing = bool(missing_modules("llama.cpp"))
    rows = []
    for model in catalog.EMBEDDED.values():
        path = catalog.installed_path(model)
        rows.append({"name": model.short, "model": model.title, "quantization": model.quantization,
                     "engine": "llama.cpp", "engine_installed": not engine_missing, "default": model is catalog.DEFAULT, "installed": path is not None,
                     "path": str(path) if path else None, "bytes": path.stat().st_size if path else None,
                     "install": None if path else model.install})
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    for row in rows:
        mark = "*" if row["default"] else " "
        where = (f"{row['path']} ({row['bytes'] / 2**30:.2f} GiB)" if row["installed"]
                 else f"not installed: {row['install']}")
        print(f"{mark} {row['name']:<20} {row['model']} {row['quantization']} GGUF, llama.cpp  {where}")
    print("* the default (--model NAME picks another; also any .gguf file, model folder or HF id)")
    if engine_missing:
        print(f"llama.cpp, the engine these run on, is not installed: pip install "
              f"'hierplan[{ENGINE_EXTRAS['llama.cpp'][0]}]' (models on a server need none: --model openai:NAME)")
    return 0
