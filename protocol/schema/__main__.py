from . import SCHEMA_PATH, render

SCHEMA_PATH.write_text(render(), encoding="utf-8")
print(f"wrote {SCHEMA_PATH}")
