"""An engine's ops: [signature.*] (C functions) and [op.*] (an op's run signature and, as an interface, its
members, packing keys and roles with the rules a call is routed by)."""

from __future__ import annotations

import re
from pathlib import Path

from isaforge.engine.model import ANY_ROLE, IDENTIFIER, OP_NAME, SYMBOL, EngineError, EngineOp, Role, Signature
from isaforge.engine.toml_fields import nonempty_string, string_list, subtable, unknown_keys

SIGNATURE_KEYS = {"returns", "params", "args", "doc"}
OP_KEYS = {"signature", "doc", "members", "packing", "roles", "share_packing"}
ROLE_KEYS = {"name", "when"}
# A role rule: <parameter of the op> <comparison> <whole number>; the C dispatcher evaluates it (engine_dispatch.c).
RULE = re.compile(r"^\s*(?P<param>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<cmp>==|!=|<=|>=|<|>)\s*(?P<value>[0-9]+)\s*$")


def read_ops(raw: dict, path: Path) -> dict[str, EngineOp]:
    signatures = {key: _signature(key, sig, path) for key, sig in subtable(raw, "signature", path).items()}
    ops: dict[str, EngineOp] = {}
    for index, (key, op) in enumerate(subtable(raw, "op", path).items()):
        if not OP_NAME.match(key):
            raise EngineError(f"{path}: op {key!r} must be named <op>_<dtype> (e.g. dot_s8), as kernel names start")
        unknown_keys(f"[op.{key}]", op, OP_KEYS, path)
        ops[key] = _engine_op(key, index, op, signatures, path)
    if not ops:
        raise EngineError(f"{path}: declares no op; add [op.<op>_<dtype>] with signature and doc")
    return ops


def _engine_op(key: str, index: int, raw: dict, signatures: dict[str, Signature], path: Path) -> EngineOp:
    where = f"[op.{key}]"

    def signature(name: str, what: str) -> Signature:
        if name not in signatures:
            raise EngineError(f"{path}: {where} {what} uses signature {name!r}, which no [signature.{name}] declares")
        return signatures[name]

    run = signature(nonempty_string(raw, "signature", where, path), "signature")
    members_raw = raw.get("members", {})
    if not isinstance(members_raw, dict) or not all(isinstance(v, str) for v in members_raw.values()):
        raise EngineError(f'{path}: {where} members must be a table of <member> = "<signature>"')
    for member in members_raw:
        if not SYMBOL.match(member) or member in ("name", "run"):
            raise EngineError(f"{path}: {where} member {member!r} must be a C identifier other than name and run")
    members = tuple((m, signature(sig, f"member {m}")) for m, sig in members_raw.items())
    packing = string_list(raw, "packing", where, path)
    for k in packing:
        if not SYMBOL.match(k) or k in ("name", "run") or k in members_raw:
            raise EngineError(f"{path}: {where} packing key {k!r} must be a C identifier, not a member's name")
    share = raw.get("share_packing", False)
    if not isinstance(share, bool):
        raise EngineError(f"{path}: {where} share_packing must be true or false")
    roles = _roles(raw.get("roles"), run, where, path)
    if share and not packing:
        raise EngineError(f"{path}: {where} share_packing needs packing = [...] (the keys its kernels must agree on)")
    return EngineOp(key, index, run, nonempty_string(raw, "doc", where, path), members, packing, roles, share)


def _roles(raw: object, run: Signature, where: str, path: Path) -> tuple[Role, ...]:
    if raw is None:
        return (Role(ANY_ROLE),)
    if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
        raise EngineError(f'{path}: {where} roles must be a list of {{ name = "…", when = "<param> == 1" }}, the last '
                          "without when")  # fmt: skip
    roles = []
    params = _integer_params(run)
    for i, entry in enumerate(raw):
        unknown_keys(f"{where} roles", entry, ROLE_KEYS, path)
        name = nonempty_string(entry, "name", f"{where} roles", path)
        if not IDENTIFIER.match(name) or name in (r.name for r in roles):
            raise EngineError(f"{path}: {where} role {name!r}: lower-case letters and digits, each role once")
        last = i == len(raw) - 1
        if "when" not in entry:
            if not last:
                raise EngineError(f"{path}: {where} role {name} has no when; only the last role serves any call")
            roles.append(Role(name))
            continue
        if last:
            raise EngineError(f"{path}: {where} role {name} has a when; the last role serves the other calls, without")
        rule = RULE.match(str(entry["when"]))
        if rule is None:
            raise EngineError(f'{path}: {where} role {name}: when = "{entry["when"]}" is not <param> <==, !=, <, <=, '
                              ">, >=> <whole number>")  # fmt: skip
        if rule["param"] not in params:
            raise EngineError(
                f"{path}: {where} role {name}: {rule['param']!r} is not an integer parameter of signature "
                f"{run.name} ({', '.join(params) or 'it has none'})"
            )
        roles.append(Role(name, rule["param"], rule["cmp"], int(rule["value"])))
    if len({r.param for r in roles if r.param}) > 1:
        raise EngineError(f"{path}: {where} roles: every rule must read the same parameter")
    return tuple(roles)


def _integer_params(sig: Signature) -> list[str]:
    """The parameters of a signature a role rule may read: not pointers, not arrays."""
    passed = {a.strip() for a in sig.args.split(",")}
    out = []
    for decl in sig.params.split(","):
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", decl)
        if len(words) >= 2 and "*" not in decl and "[" not in decl and words[-1] in passed:
            out.append(words[-1])
    return out


def _signature(key: str, raw: dict, path: Path) -> Signature:
    unknown_keys(f"[signature.{key}]", raw, SIGNATURE_KEYS, path)
    where = f"[signature.{key}]"
    params = nonempty_string(raw, "params", where, path)
    # A function of no parameters (params = "void", a member such as get_nr) passes no arguments.
    args = raw.get("args", "") if params.strip() == "void" else nonempty_string(raw, "args", where, path)
    if not isinstance(args, str):
        raise EngineError(f'{path}: {where} args must be a string ("" for params = "void")')
    return Signature(key, nonempty_string(raw, "returns", where, path, default="void"), params, args,
                     nonempty_string(raw, "doc", where, path))  # fmt: skip
