"""The message types the cel-expr engine's *check* environment declares (``drasat/cel_check.proto``).

Kubernetes' CEL types ``device`` as a message, and Quantity and Semver as types of their own; the
check environment gets them from a descriptor pool. :func:`check_file` is their definition, built
with protobuf's ``descriptor_pb2``; start-up uses :data:`CHECK_FILE`, the same file serialized (as
protoc's generated modules carry theirs), because importing ``descriptor_pb2`` alone costs about
2 ms of every ``drasat solve``. A test checks that the two agree.
"""

from __future__ import annotations

from typing import Any

CHECK_FILE = (
    b'\n\x16drasat/cel_check.proto\x12\nkubernetes\x1a\x1cgoogle/protobuf/struct.proto"\x18\n\x08Quantity'
    b'\x12\x0c\n\x04text\x18\x01 \x01(\t"\x16\n\x06Semver\x12\x0c\n\x04text\x18\x01 \x01(\t"\xc5\x02\n\tDR'
    b"ADevice\x12\x0e\n\x06driver\x18\x01 \x01(\t\x12 \n\x18allowMultipleAllocations\x18\x02 \x01(\x08\x12"
    b"9\n\nattributes\x18\x03 \x03(\x0b2%.kubernetes.DRADevice.AttributesEntry\x125\n\x08capacity\x18\x04 "
    b"\x03(\x0b2#.kubernetes.DRADevice.CapacityEntry\x1aJ\n\x0fAttributesEntry\x12\x0b\n\x03key\x18\x01 "
    b"\x01(\t\x12&\n\x05value\x18\x02 \x01(\x0b2\x17.google.protobuf.Struct:\x028\x01\x1aH\n\rCapacityEntr"
    b"y\x12\x0b\n\x03key\x18\x01 \x01(\t\x12&\n\x05value\x18\x02 \x01(\x0b2\x17.google.protobuf.Struct:"
    b"\x028\x01b\x06proto3"
)
""":func:`check_file`, serialized."""


def check_file() -> Any:
    """``drasat/cel_check.proto`` as a FileDescriptorProto: Quantity, Semver (each a text) and DRADevice."""
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(
        name="drasat/cel_check.proto",
        package="kubernetes",
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    for name in ("Quantity", "Semver"):
        fdp.message_type.add(name=name).field.add(name="text", number=1, type=9, label=1)
    dev = fdp.message_type.add(name="DRADevice")
    dev.field.add(name="driver", number=1, type=9, label=1)
    dev.field.add(name="allowMultipleAllocations", number=2, type=8, label=1)
    for number, field in ((3, "attributes"), (4, "capacity")):
        entry = dev.nested_type.add(name=field.capitalize() + "Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=9, label=1)
        entry.field.add(name="value", number=2, type=11, label=1, type_name=".google.protobuf.Struct")
        dev.field.add(name=field, number=number, type=11, label=3, type_name=f".kubernetes.DRADevice.{entry.name}")
    return fdp
