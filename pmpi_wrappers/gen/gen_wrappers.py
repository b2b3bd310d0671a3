#!/usr/bin/env python3
# critpath — pmpi_wrappers/gen/gen_wrappers.py
#
# Generates the MPI wrappers from the declarative spec:
#
#   spec/mpi.toml + templates/<recipe>.tmpl
#     --> <out>/pmpi_wrappers/mpi_wrappers.cpp      the extern "C" MPI_* entry points
#     --> <out>/pmpi_wrappers/generated_regions.h   region ids (stable, from the spec), names and
#                                                   MPI semantics (class, sync, root, completion,
#                                                   lifecycle: defs::MpiSemantics)
#     --> <out>/mpi-coverage.md                     the coverage table (docs/mpi-coverage.md)
#
# Other modes: --list-symbols (one function name per line, for CMake's CRITPATH_HAVE_PMPI_<fn>
# checks), --function NAME (print one wrapper: golden tests), --update-golden DIR NAMES...,
# --docs PATH (write the coverage document somewhere else, e.g. the source tree).
#
# Output is a pure function of the inputs: no timestamps, host names or dict-order effects.
#
# Template language (deliberately tiny; semantics live in the spec and in semantics/):
#   '## key: value' lines at the top of a template are metadata:
#       requires  roles the spec entry must provide        events  emitted events (docs)
#       keys      recipe-specific spec keys it reads       summary one line for the docs
#   ${fn}  ${id}  ${group}  ${mpi}  ${recipe}   entry fields     ${params}  C parameter list
#   ${short}                   the name without "MPI_" (CRITPATH_HAVE_PMPI_${short})
#   ${args}                    the call's arguments, in order
#   ${args:ROLE=EXPR,...}      the same, with the parameter of ROLE replaced by EXPR
#   ${role.R} / ${role.R|D}    name of the parameter with role R (default D when absent)
#   ${has.R}                   "true" / "false"
#   ${spec.K} / ${spec.K|D}    a recipe-specific key of the entry
# An unknown placeholder, a missing required role or a missing key is an error. Template
# locals are named cp_* (parameters may not be), so they never shadow a parameter.
import argparse
import os
import re
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

ROLES = {
    # message
    "buf", "count", "datatype", "peer", "tag", "comm", "request", "status",
    "sendbuf", "sendcount", "sendcounts", "sendtype", "sendtypes", "dest", "sendtag",
    "recvbuf", "recvcount", "recvcounts", "recvtype", "recvtypes", "source", "recvtag",
    "displs", "sdispls", "rdispls", "root", "op", "message",
    # completion
    "nreq", "requests", "statuses", "flag", "index", "outcount", "indices",
    # communicators, groups, one-sided windows
    "newcomm", "group", "win", "newwin", "size", "lock_type",
    # life cycle
    "argc", "argv", "required", "provided", "level",
    # passed through, not interpreted
    "none",
}
# MPI semantics (spec header; libtrace/defs/definitions.h): key -> (C++ enum, value -> enumerator).
# Given per group in [groups], overridable per entry; every key but `class` defaults to none.
SEMANTICS = {
    "class": ("MpiClass", {"p2p": "kP2p", "collective": "kCollective", "rma": "kRma",
                           "management": "kManagement"}),
    "sync": ("MpiSync", {"none": "kNone", "barrier": "kBarrier", "nxn": "kNxN",
                         "one_to_n": "kOneToN", "n_to_one": "kNToOne", "scan": "kScan",
                         "other": "kOther"}),
    "root": ("MpiRoot", {"none": "kNone", "source": "kSource", "sink": "kSink"}),
    "completion": ("MpiCompletion", {"none": "kNone", "wait": "kWait", "test": "kTest"}),
    "lifecycle": ("MpiLifecycle", {"none": "kNone", "init": "kInit", "finalize": "kFinalize"}),
    "rma": ("MpiRma", {"none": "kNone", "comm": "kComm", "create": "kCreate", "free": "kFree",
                       "fence": "kFence", "start": "kStart", "complete": "kComplete",
                       "post": "kPost", "wait": "kWait", "test": "kTest", "lock": "kLock",
                       "unlock": "kUnlock", "lock_all": "kLockAll", "unlock_all": "kUnlockAll",
                       "flush": "kFlush", "flush_all": "kFlushAll", "other": "kOther"}),
}
ENTRY_KEYS = {"name", "id", "group", "mpi", "recipe", "fortran", "params", "variadic"} | set(SEMANTICS)
PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")


class SpecError(Exception):
    pass


def load_templates(tdir):
    templates = {}
    for fname in sorted(os.listdir(tdir)):
        if not fname.endswith(".tmpl"):
            continue
        meta, body = {}, []
        with open(os.path.join(tdir, fname), encoding="utf-8") as f:
            lines = f.read().splitlines()
        i = 0
        while i < len(lines) and lines[i].startswith("##"):
            key, _, value = lines[i][2:].partition(":")
            meta.setdefault(key.strip(), []).append(value.strip())
            i += 1
        for k in list(meta):
            meta[k] = " ".join(meta[k])
        templates[fname[:-5]] = {"meta": meta, "body": "\n".join(lines[i:]).rstrip("\n")}
    return templates


def check_semantics(where, values):
    for k, v in values.items():
        if k not in SEMANTICS:
            raise SpecError(f"{where}: unknown semantics key '{k}'")
        if v not in SEMANTICS[k][1]:
            raise SpecError(f"{where}: {k} = '{v}' is not one of {', '.join(SEMANTICS[k][1])}")


def resolve_semantics(fn, groups):
    """The entry's MPI semantics: its group's defaults, overridden by the entry's own keys."""
    name = fn["name"]
    sem = {k: "none" for k in SEMANTICS if k != "class"}
    sem.update(groups[fn["group"]])
    sem.update({k: fn[k] for k in SEMANTICS if k in fn})
    check_semantics(name, sem)
    if "class" not in sem:
        raise SpecError(f"{name}: no class (give it in [groups.{fn['group']}] or the entry)")
    patterns = {"barrier", "nxn", "one_to_n", "n_to_one", "scan"}
    if sem["sync"] in patterns and sem["class"] != "collective":
        raise SpecError(f"{name}: sync = '{sem['sync']}' needs class = 'collective'")
    rooted = "root" in fn["role_map"]
    if rooted != (sem["root"] != "none"):
        raise SpecError(f"{name}: root = '{sem['root']}' but the entry "
                        f"{'has' if rooted else 'has no'} parameter with role 'root'")
    want = {"one_to_n": "source", "n_to_one": "sink"}
    if rooted and want.get(sem["sync"]) != sem["root"]:
        raise SpecError(f"{name}: root = '{sem['root']}' does not fit sync = '{sem['sync']}' "
                        "(one_to_n: source, n_to_one: sink)")
    if not rooted and sem["sync"] in want:
        raise SpecError(f"{name}: sync = '{sem['sync']}' needs a root")
    if sem["completion"] != "none" and not ("requests" in fn["role_map"] or "request" in fn["role_map"]):
        raise SpecError(f"{name}: completion = '{sem['completion']}' without a request parameter")
    return sem


def load_spec(path, templates):
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    functions = spec.get("function", [])
    groups = spec.get("groups", {})
    for g, values in groups.items():
        if not isinstance(values, dict):
            raise SpecError(f"[groups] {g}: expected a table of semantics keys")
        check_semantics(f"[groups] {g}", values)
    seen_names, seen_ids = {}, {}
    for fn in functions:
        name = fn.get("name", "?")
        for k in ("name", "id", "group", "mpi", "recipe", "params"):
            if k not in fn:
                raise SpecError(f"{name}: missing field '{k}'")
        if not re.fullmatch(r"MPI_[A-Z][a-z0-9_]*", name):
            raise SpecError(f"{name}: not an MPI function name")
        if name in seen_names:
            raise SpecError(f"{name}: listed twice")
        fid = fn["id"]
        if not isinstance(fid, int) or not 1 <= fid <= 999:
            raise SpecError(f"{name}: id {fid} outside 1..999")
        if fid in seen_ids:
            raise SpecError(f"{name}: id {fid} already used by {seen_ids[fid]}")
        seen_names[name], seen_ids[fid] = True, name
        if fn["recipe"] not in templates or fn["recipe"].startswith("_"):
            raise SpecError(f"{name}: unknown recipe '{fn['recipe']}'")
        fn.setdefault("fortran", spec.get("spec", {}).get("fortran_default", "auto"))
        roles = {}
        for p in fn["params"]:
            for k in ("name", "type", "role"):
                if k not in p:
                    raise SpecError(f"{name}: parameter without '{k}'")
            if p["name"].startswith("cp_"):
                raise SpecError(f"{name}: parameter names starting with cp_ are reserved for "
                                "template locals")
            p["roles"] = p["role"].split()
            for r in p["roles"]:
                if r not in ROLES:
                    raise SpecError(f"{name}: parameter {p['name']}: unknown role '{r}'")
                if r != "none":
                    if r in roles:
                        raise SpecError(f"{name}: role '{r}' given twice")
                    roles[r] = p["name"]
        fn["role_map"] = roles
        meta = templates[fn["recipe"]]["meta"]
        for r in meta.get("requires", "").split():
            if r not in roles:
                raise SpecError(f"{name}: recipe '{fn['recipe']}' requires role '{r}'")
        allowed = ENTRY_KEYS | set(meta.get("keys", "").split())
        for k in fn:
            if k not in allowed and k not in ("role_map", "semantics"):
                raise SpecError(f"{name}: key '{k}' is not used by recipe '{fn['recipe']}'")
        for k in meta.get("keys", "").split():
            if k not in fn:
                raise SpecError(f"{name}: recipe '{fn['recipe']}' needs key '{k}'")
        if fn["group"] not in groups:
            raise SpecError(f"{name}: group '{fn['group']}' is not in [groups]")
        fn["semantics"] = resolve_semantics(fn, groups)
    return functions


def c_decl(ptype, pname):
    # "const void*" + "buf" -> "const void* buf"; "int (*)[3]" + "r" -> "int (*r)[3]"
    if "(*)" in ptype:
        return ptype.replace("(*)", f"(*{pname})")
    return f"{ptype} {pname}"


def expand(text, fn, where, extra=None):
    roles = fn["role_map"]
    extra = extra or {}

    def args_with(overrides):
        out = []
        for p in fn["params"]:
            expr = p["name"]
            for r in p["roles"]:
                if r in overrides:
                    expr = overrides[r]
            out.append(expr)
        return ", ".join(out)

    def sub(m):
        key = m.group(1)
        if key in extra:
            return extra[key]
        if key == "short":
            return fn["name"][4:]
        if key in ("fn", "id", "group", "mpi", "recipe"):
            return str(fn["name" if key == "fn" else key])
        if key == "params":
            decl = ", ".join(c_decl(p["type"], p["name"]) for p in fn["params"])
            if fn.get("variadic"):
                decl += ", ..."
            return decl or "void"
        if key == "args":
            return args_with({})
        if key.startswith("args:"):
            overrides = {}
            for item in key[5:].split(","):
                r, _, e = item.partition("=")
                if r.strip() not in ROLES:
                    raise SpecError(f"{where}: unknown role in '${{{key}}}'")
                overrides[r.strip()] = e.strip()
            return args_with(overrides)
        if key.startswith("role.") or key.startswith("spec."):
            kind, _, rest = key.partition(".")
            name, bar, default = rest.partition("|")
            if kind == "role":
                if name not in ROLES:
                    raise SpecError(f"{where}: unknown role '{name}'")
                if name in roles:
                    return roles[name]
            else:
                if name in fn:
                    v = fn[name]
                    return ("true" if v else "false") if isinstance(v, bool) else str(v)
            if bar:
                return default
            raise SpecError(f"{where}: {fn['name']} has no {kind} '{name}'")
        if key.startswith("has."):
            return "true" if key[4:] in roles else "false"
        raise SpecError(f"{where}: unknown placeholder '${{{key}}}'")

    return PLACEHOLDER.sub(sub, text)


HANDLES = {"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Op": "Op", "MPI_Group": "Group",
           "MPI_Win": "Win", "MPI_Info": "Info", "MPI_Message": "Message",
           "MPI_Request": "Request"}


def fortran_plan(fn):
    """The Fortran entry point of a spec entry: (params, pre, args, post) C++ fragments, or
    (None, reason) when the entry gets none. Conversions (Open MPI's mpif.h / use mpi ABI):
    scalars by reference, handles through PMPI_<Handle>_f2c/c2f, statuses through
    PMPI_Status_c2f, MPI_IN_PLACE / MPI_BOTTOM / MPI_STATUS(ES)_IGNORE from the Fortran
    sentinels, Waitany/Waitsome indices 1-based, LOGICAL outputs 0/1."""
    if fn.get("fortran") == "none":
        return None, "spec: fortran = none"
    roles = fn["role_map"]
    nreq = roles.get("nreq")
    fparams, pre, args, post = [], [], [], []
    for p in fn["params"]:
        t, n, rs = p["type"], p["name"], p["roles"]
        if "argc" in rs or "argv" in rs:
            args.append("nullptr")
            continue
        if t in ("int", "const int"):
            fparams.append(f"MPI_Fint* {n}")
            args.append(f"int(*{n})")
        elif t in ("int*",) and ("flag" in rs or "index" in rs or "outcount" in rs):
            fparams.append(f"MPI_Fint* {n}")
            pre.append(f"  int cp_{n} = 0;")
            args.append(f"&cp_{n}")
            if "flag" in rs:
                post.append(f"  *{n} = cp_{n} ? 1 : 0;")
            elif "index" in rs:
                post.append(f"  *{n} = (cp_{n} == MPI_UNDEFINED || cp_rc != MPI_SUCCESS) ? cp_{n} : cp_{n} + 1;")
            else:
                post.append(f"  *{n} = cp_{n};")
        elif t == "int*" and "indices" in rs:
            fparams.append(f"MPI_Fint* {n}")
            args.append(f"reinterpret_cast<int*>({n})")
            oc = roles["outcount"]
            post.append(f"  if (cp_{oc} != MPI_UNDEFINED)")
            post.append(f"    for (int cp_k = 0; cp_k < cp_{oc}; ++cp_k) ++{n}[cp_k];")
        elif t in ("int*", "const int*"):
            fparams.append(f"MPI_Fint* {n}")
            args.append(f"reinterpret_cast<{t}>({n})")
        elif t == "int (*)[3]":
            fparams.append(f"MPI_Fint* {n}")
            args.append(f"reinterpret_cast<int (*)[3]>({n})")
        elif t in ("void*", "const void*"):
            fparams.append(f"{t} {n}")
            args.append(f"fortran_buffer({n})")
        elif t == "MPI_Aint":
            fparams.append(f"MPI_Aint* {n}")
            args.append(f"*{n}")
        elif t == "const MPI_Aint*":
            fparams.append(f"const MPI_Aint* {n}")
            args.append(n)
        elif t in HANDLES:
            fparams.append(f"MPI_Fint* {n}")
            args.append(f"PMPI_{HANDLES[t]}_f2c(*{n})")
        elif t.endswith("*") and t[:-1] in HANDLES:
            h = HANDLES[t[:-1]]
            fparams.append(f"MPI_Fint* {n}")
            if "requests" in rs and nreq:
                pre.append(f"  FortranHandles<MPI_Request> cp_{n}(int(*{nreq}), {n}, PMPI_Request_f2c);")
                args.append(f"cp_{n}.data()")
                post.append(f"  cp_{n}.store({n}, PMPI_Request_c2f);")
            else:
                pre.append(f"  {t[:-1]} cp_{n} = PMPI_{h}_f2c(*{n});")
                args.append(f"&cp_{n}")
                post.append(f"  if (cp_rc == MPI_SUCCESS || {str('request' in rs or 'requests' in rs).lower()}) *{n} = PMPI_{h}_c2f(cp_{n});")
        elif t == "MPI_Status*":
            fparams.append(f"MPI_Fint* {n}")
            if "statuses" in rs:
                cnt = f"cp_{roles['outcount']}" if "outcount" in roles else f"int(*{nreq})"
                pre.append(f"  FortranStatuses cp_{n}(int(*{nreq}), {n});")
                args.append(f"cp_{n}.data()")
                post.append(f"  cp_{n}.store({n}, {cnt});")
            else:
                pre.append(f"  MPI_Status cp_{n};")
                args.append(f"({n} == MPI_F_STATUS_IGNORE ? MPI_STATUS_IGNORE : &cp_{n})")
                post.append(f"  if ({n} != MPI_F_STATUS_IGNORE && cp_rc == MPI_SUCCESS) PMPI_Status_c2f(&cp_{n}, {n});")
        else:
            return None, f"parameter type {t}"
    fparams.append("MPI_Fint* ierr")
    return (fparams, pre, args, post), None


def render_fortran(fn):
    plan, reason = fortran_plan(fn)
    if plan is None:
        return ""
    fparams, pre, args, post = plan
    base = fn["name"].lower()
    decl = ", ".join(fparams)
    lines = [
        "#if CRITPATH_FORTRAN_WRAPPERS",
        f"// Fortran (mpif.h, use mpi): {base}_ and its other spellings, converted to C and",
        "// funnelled into the same core.",
        f"extern \"C\" CRITPATH_EXPORT CRITPATH_NOINSTR void {base}_({decl}) {{",
        *pre,
        f"  const int cp_rc = cp_core_{fn['name']}({', '.join(args)});",
        *post,
        "  *ierr = cp_rc;",
        "}",
    ]
    for alias in (f"{base}__", base, fn["name"].upper()):
        lines.append(f"extern \"C\" CRITPATH_EXPORT void {alias}({decl}) "
                     f"__attribute__((alias(\"{base}_\")));")
    lines.append("#endif")
    return "\n".join(lines)


def render_function(fn, templates):
    tmpl = templates[fn["recipe"]]
    body = expand(tmpl["body"], fn, f"templates/{fn['recipe']}.tmpl")
    events = tmpl["meta"].get("events", "(see template)")
    return expand(templates["_frame"]["body"], fn, "templates/_frame.tmpl",
                  {"body": body, "events": events, "fortran": render_fortran(fn),
                   # GCC never inlines variadic functions
                   "inline": "" if fn.get("variadic") else "__attribute__((always_inline)) "})


def render_wrappers(functions, templates):
    parts = [templates["_prologue"]["body"]]
    for fn in sorted(functions, key=lambda f: f["id"]):
        parts.append(render_function(fn, templates))
    return "\n\n".join(parts) + "\n"


def render_regions(functions):
    lines = [
        "// critpath — generated_regions.h: GENERATED by pmpi_wrappers/gen/gen_wrappers.py from",
        "// pmpi_wrappers/spec/mpi.toml. Do not edit; edit the spec.",
        "//",
        "// Region ids of the intercepted MPI functions (stable: they come from the spec, never",
        "// from the order of entries) and the table MPI_Init registers in defs::regions(), with",
        "// each function's MPI semantics (the spec's class, sync, root, completion, lifecycle).",
        "#pragma once",
        "",
        "#include <cstdint>",
        "#include <span>",
        "",
        "#include \"libtrace/defs/definitions.h\"",
        "",
        "namespace critpath::pmpi {",
        "",
        "struct GeneratedRegion {",
        "  uint32_t id;",
        "  const char* name;",
        "  const char* group;",
        "  defs::MpiSemantics mpi;",
        "};",
        "",
        "namespace region {",
    ]
    ordered = sorted(functions, key=lambda f: f["id"])
    for fn in ordered:
        lines.append(f"inline constexpr uint32_t k{fn['name']} = {fn['id']};")
    lines += ["}  // namespace region", "", "inline constexpr GeneratedRegion kGeneratedRegions[] = {"]
    for fn in ordered:
        sem = ", ".join(f"defs::{SEMANTICS[k][0]}::{SEMANTICS[k][1][fn['semantics'][k]]}"
                        for k in SEMANTICS)
        lines.append(f"    {{{fn['id']}, \"{fn['name']}\", \"{fn['group']}\",")
        lines.append(f"     {{{sem}}}}},")
    lines += [
        "};",
        "",
        "inline std::span<const GeneratedRegion> generated_regions() { return kGeneratedRegions; }",
        "",
        "// Defines every MPI region in defs::regions() with its semantics. Called by the MPI_Init",
        "// wrappers (templates/init.tmpl) before the session starts; idempotent.",
        "inline void define_generated_regions() noexcept {",
        "  try {",
        "    for (const GeneratedRegion& r : kGeneratedRegions)",
        "      defs::regions().define_fixed(r.id, r.name, defs::RegionKind::kMpi, r.mpi);",
        "  } catch (...) {  // out of memory: regions stay unnamed, the analysis copes",
        "  }",
        "}",
        "",
        "}  // namespace critpath::pmpi",
        "",
    ]
    return "\n".join(lines)


def semantics_text(sem):
    """'collective, sync one_to_n, root source': the class, then every non-default key."""
    return ", ".join([sem["class"]] + [f"{k} {sem[k]}" for k in SEMANTICS
                                       if k != "class" and sem[k] != "none"])


def render_coverage(functions, templates, coverage_intro):
    out = [coverage_intro.rstrip("\n"), "", "## Functions", "",
           "Generated from `pmpi_wrappers/spec/mpi.toml` by `pmpi_wrappers/gen/gen_wrappers.py`;",
           "do not edit this section by hand.", "",
           "| id | function | group | MPI | recipe | semantics | Fortran (Open MPI) | events |",
           "|---:|---|---|---|---|---|---|---|"]
    for fn in sorted(functions, key=lambda f: f["id"]):
        ev = templates[fn["recipe"]]["meta"].get("events", "")
        plan, reason = fortran_plan(fn)
        fort = "yes" if plan else f"no ({reason})"
        out.append(f"| {fn['id']} | `{fn['name']}` | {fn['group']} | {fn['mpi']} | "
                   f"{fn['recipe']} | {semantics_text(fn['semantics'])} | {fort} | {ev} |")
    out += ["", "## Recipes", "", "| recipe | summary |", "|---|---|"]
    used = sorted({fn["recipe"] for fn in functions})
    for r in used:
        out.append(f"| {r} | {templates[r]['meta'].get('summary', '')} |")
    return "\n".join(out) + "\n"


def extract_function(wrappers_text, name):
    begin, end = f"// ---- begin {name} ----", f"// ---- end {name} ----"
    i, j = wrappers_text.find(begin), wrappers_text.find(end)
    if i < 0 or j < 0:
        raise SpecError(f"{name}: not in the generated output")
    return wrappers_text[i:j + len(end)] + "\n"


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    ap = argparse.ArgumentParser(
        description="Generate the critpath MPI wrappers from pmpi_wrappers/spec/mpi.toml.")
    ap.add_argument("--spec", default=os.path.join(ROOT, "spec", "mpi.toml"))
    ap.add_argument("--templates", default=os.path.join(ROOT, "templates"))
    ap.add_argument("--out", help="output directory for the generated files")
    ap.add_argument("--list-symbols", action="store_true")
    ap.add_argument("--function", help="print the wrapper of one function")
    ap.add_argument("--update-golden", metavar="DIR",
                    help="write DIR/<fn>.cpp.txt for each function named after the options")
    ap.add_argument("--docs", metavar="PATH", help="write the coverage document to PATH")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args(argv)
    try:
        templates = load_templates(a.templates)
        for required in ("_prologue", "_frame", "_coverage"):
            if required not in templates:
                raise SpecError(f"templates/{required}.tmpl is missing")
        functions = load_spec(a.spec, templates)
        if a.list_symbols:
            for fn in sorted(functions, key=lambda f: f["id"]):
                print(fn["name"])
            return 0
        wrappers = render_wrappers(functions, templates)
        if a.function:
            sys.stdout.write(extract_function(wrappers, a.function))
            return 0
        if a.update_golden:
            for name in a.names:
                write_if_changed(os.path.join(a.update_golden, f"{name}.cpp.txt"),
                                 extract_function(wrappers, name))
            return 0
        coverage = render_coverage(functions, templates, templates["_coverage"]["body"])
        if a.docs:
            write_if_changed(a.docs, coverage)
        if a.out:
            write_if_changed(os.path.join(a.out, "pmpi_wrappers", "mpi_wrappers.cpp"), wrappers)
            write_if_changed(os.path.join(a.out, "pmpi_wrappers", "generated_regions.h"),
                             render_regions(functions))
            write_if_changed(os.path.join(a.out, "mpi-coverage.md"), coverage)
        if not (a.out or a.docs):
            ap.error("nothing to do: give --out, --docs, --function or --list-symbols")
        return 0
    except (SpecError, tomllib.TOMLDecodeError, OSError) as e:
        print(f"gen_wrappers.py: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
