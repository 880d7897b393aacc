"""Recover MindSpore's ``mind_ir.proto`` and write it with its Python module into the front end.

Run with an installed MindSpore (never a dependency of the project, never needed by CI)::

    /path/to/venv-with-mindspore/bin/python tools/gen_mind_ir_schema.py

MindSpore ships only the generated module (``mindspore/train/mind_ir_pb2.py``); the schema is the
serialized ``FileDescriptorProto`` inside it. This prints that descriptor back as ``.proto`` text
(``frontend/train/mind_ir.proto``: the human-readable schema) and writes ``frontend/train/mind_ir_pb2.py``
in the builder-API form protoc emits, without protoc's runtime-version check, so that the project's
protobuf floor (3.20.3, ``tests/test_protobuf_floor.py``) loads it as traces/et_def_pb2.py is loaded.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from google.protobuf import descriptor_pb2

OUT = Path(__file__).resolve().parents[1] / "frontend" / "train"
FD = descriptor_pb2.FieldDescriptorProto
SCALARS = {FD.TYPE_DOUBLE: "double", FD.TYPE_FLOAT: "float", FD.TYPE_INT64: "int64", FD.TYPE_UINT64: "uint64",
           FD.TYPE_INT32: "int32", FD.TYPE_FIXED64: "fixed64", FD.TYPE_FIXED32: "fixed32", FD.TYPE_BOOL: "bool",
           FD.TYPE_STRING: "string", FD.TYPE_BYTES: "bytes", FD.TYPE_UINT32: "uint32", FD.TYPE_SFIXED32: "sfixed32",
           FD.TYPE_SFIXED64: "sfixed64", FD.TYPE_SINT32: "sint32", FD.TYPE_SINT64: "sint64"}
LABELS = {FD.LABEL_OPTIONAL: "optional", FD.LABEL_REQUIRED: "required", FD.LABEL_REPEATED: "repeated"}


def _type_name(field: descriptor_pb2.FieldDescriptorProto, package: str) -> str:
    if field.type in SCALARS:
        return SCALARS[field.type]
    return field.type_name.removeprefix(f".{package}.")


def _message(msg: descriptor_pb2.DescriptorProto, package: str, indent: str) -> list[str]:
    lines = [f"{indent}message {msg.name} {{"]
    maps = {m.name: m for m in msg.nested_type if m.options.map_entry}
    for enum in msg.enum_type:
        lines += _enum(enum, indent + "  ")
    for nested in msg.nested_type:
        if not nested.options.map_entry:
            lines += _message(nested, package, indent + "  ")
    for f in msg.field:
        entry = maps.get(f.type_name.rsplit(".", 1)[-1]) if f.type == FD.TYPE_MESSAGE else None
        default = f" [default = {f.default_value}]" if f.HasField("default_value") else ""
        if entry is not None:
            key, value = entry.field
            lines.append(f"{indent}  map<{_type_name(key, package)}, {_type_name(value, package)}> {f.name} = {f.number};")
        else:
            lines.append(f"{indent}  {LABELS[f.label]} {_type_name(f, package)} {f.name} = {f.number}{default};")
    lines.append(f"{indent}}}")
    return lines


def _enum(enum: descriptor_pb2.EnumDescriptorProto, indent: str) -> list[str]:
    return ([f"{indent}enum {enum.name} {{"] + [f"{indent}  {v.name} = {v.number};" for v in enum.value]
            + [f"{indent}}}"])


def proto_text(fdp: descriptor_pb2.FileDescriptorProto) -> str:
    """``fdp`` as .proto source (proto2; messages, nested enums and messages, maps, defaults)."""
    lines = [f'// Recovered from MindSpore 2.10\'s mindspore/train/mind_ir_pb2.py by tools/gen_mind_ir_schema.py.',
             f'syntax = "{fdp.syntax or "proto2"}";', f"package {fdp.package};", ""]
    for enum in fdp.enum_type:
        lines += _enum(enum, "") + [""]
    for msg in fdp.message_type:
        lines += _message(msg, fdp.package, "") + [""]
    return "\n".join(lines)


PB2 = '''# -*- coding: utf-8 -*-
# Generated from MindSpore 2.10's mind_ir.proto (the descriptor inside its mindspore/train/mind_ir_pb2.py)
# by tools/gen_mind_ir_schema.py, in protoc's builder-API form without its runtime-version check, so
# that protobuf >= 3.20 loads it (tests/test_protobuf_floor.py). DO NOT EDIT: regenerate.
"""Generated protocol buffer code."""
from google.protobuf import descriptor_pool as _descriptor_pool
from google.protobuf import symbol_database as _symbol_database
from google.protobuf.internal import builder as _builder

_sym_db = _symbol_database.Default()

DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile({data!r})

_globals = globals()
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, _globals)
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'mind_ir_pb2', _globals)
'''


def main() -> None:
    import mindspore
    path = Path(mindspore.__file__).parent / "train" / "mind_ir_pb2.py"
    spec = importlib.util.spec_from_file_location("ms_mind_ir_pb2", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fdp = descriptor_pb2.FileDescriptorProto()
    module.DESCRIPTOR.CopyToProto(fdp)
    (OUT / "mind_ir.proto").write_text(proto_text(fdp))
    (OUT / "mind_ir_pb2.py").write_text(PB2.format(data=fdp.SerializeToString()))
    print("wrote", OUT / "mind_ir.proto", OUT / "mind_ir_pb2.py", f"(MindSpore {mindspore.__version__})")


if __name__ == "__main__":
    main()
