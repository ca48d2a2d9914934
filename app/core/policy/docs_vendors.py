"""The part of `policies/README.md` about vendor data: `sources`, `identities`, `installers` (see docs.py)."""

VENDOR_DATA = """\
## Vendor data: sources, identities, installers

Three top-level sections describe vendors as data, reviewed like the tiers: adding a vendor's
fork, registry, GitHub org or a tool's install script is a pull request to the policy, never to
the scanners. A reviewer checks each entry against the vendor's own documentation (write the
page in a YAML comment beside it) and adds only what the vendor is known to own.

### Patterns (`sources`, `installers`)

A pattern is a `host/path` glob without a scheme, compared case-folded (code hosts and registries
treat owners so). `*` matches any characters, `/` included; a pattern without `*` also covers
everything below it (`pypi.nvidia.com` covers `pypi.nvidia.com/simple/x`). Scanners name where an
install would take code from in a finding's `source`: `github.com/owner/repo` for a repo on a code
host, `nvcr.io/nim/meta/llama-3.1-8b-instruct` for an image (Docker Hub spelled `docker.io/...`),
`anaconda.org/channel`, an index's `host/path`, and for a `download-and-execute` finding the one
script it runs, as `host/path` with the path decoded and normalised and no query
(`raw.githubusercontent.com/Homebrew/install/HEAD/install.sh`). A line that fetches several URLs
names no source, so no pattern can vouch for it.

### `sources`: where a vendor's code comes from

`sources` maps a vendor to the forks, package indexes, conda channels and container registries it
owns (`github.com/NVIDIA/*`, `nvcr.io/nim/*`, `pypi.nvidia.com`, `registry.redhat.io`,
`docker.io/rocm/*`). A finding whose `source` matches one has `f.source_owner` (the vendor) and
`f.vendor_source`: in the default policy such an install is no dangerous capability and no bar to
a vendor-official approval, and a third party using it is reviewed. Listing a vendor's sources
trusts where its code comes from, not its repos: a vendor not in a tier stays third-party.

### `identities`: what a squatter imitates

`identities` maps a vendor (the same keys as `sources`) to four lists: `hub` (its Hub orgs; each
must sit in a tier, and in one vendor only, checked on load), `github` (its GitHub orgs),
`names` (company and product names: `NVIDIA`, `NeMo`, `TensorRT`, `Nemotron`) and `handles`
(social handles without `@`: `NVIDIAAI`, `AIatMeta`). Names are compared by skeleton (see
Lookalike orgs below). An org used on the Hub is a lookalike of an identity when:

- it is one (`NVIDIA-NeMo`, `AIatMeta`, `nemo` as a Hub org) while that vendor's `hub` does not list it;
- it is one with up to three affix words around it (`deepseek-labs`, `mistral-official`, `kimi-ai`);
- it is two of the vendor's orgs and names joined, separators or not (`nvidianemo`,
  `nvidia-tensorrt`, `metallama3`);
- for names of 6 characters or more only, it (or it without its affixes) is one edit away (two
  from 10 characters: `nemotr0n`, `Mixtra1`). Shorter names are ordinary words (`Meta`, `Phi`,
  `Grok`): they match whole, and a run of words holding one (`meta-math`) is someone else's.

`repo.lookalike_of` says what was imitated (the identity as written, `NVIDIA+NeMo` for a join).
A repo NAME imitates a vendor's path when it starts with one of the vendor's orgs or handles (or
a listed org) followed by `--` (the Hub cache form `models--nvidia--X`, with or without the
`models--` prefix) or a character drawn like `/` (U+2215, U+2044, U+29F8, U+FF0F...), under an
org that is not that vendor's. `bartowski/nvidia_Llama-3.1-Nemotron-70B-Instruct-HF-GGUF` (vendor
and `_`) is ordinary third-party naming, not a lookalike.

An install source imitates a vendor (`f.source_lookalike`, the vendor) when its owner does: the
owner on a shared host (GitHub, GitLab, Docker Hub, ghcr.io, quay.io, anaconda.org, the Hub, a
`*.github.io` page), else the host's registrable-domain label (`nvidla` in `pypi.nvidla.com`,
`nvidia-cdn` in `download.nvidia-cdn.com`). An owner that is a listed org or name, as written, is
no imitation (`github.com/NVIDIA-NeMo`, `registry.redhat.io`); handles do not count there (an X
handle says nothing about who owns that GitHub org). The default policy rejects a third party
installing from such a source (`lookalike-source`) and sends a listed org's repo to a human
(`vendor-lookalike-source`), who checks whether the vendor's card really points at an imitation.

A real org that resembles an identity (a vendor's own org no tier lists, like `amd` or
`deepmind`, or another publisher) goes to `tiers.distinct` with a comment saying whose it is.
The unit tests hold a list of real third-party publishers (TheBloke, bartowski, unsloth,
lmstudio-community, NousResearch, ...) that must never be judged lookalikes: a new identity that
flags one of them needs a narrower name or a `distinct` entry.

### `installers`: documented install scripts

`installers` maps a tool (`uv`, `rustup`, `homebrew`, `nvidia-cuda`, `huawei-cann`...) to the
documented URLs of its install script. A `download-and-execute` finding whose `source` matches has
`f.installer` (the tool): the floor leaves it to the policy's rules instead of rejecting it as
critical, and the default policy treats it like a low finding (not `critical-finding`, no bar to
`vendor-official-clean`; a third party still goes to a human through `third-party`). Anything
else piped into a shell stays critical. On a shared host the pattern must name the owner
(`github.com/*` is refused), and a pattern should name the script as documented: GitHub serves a
fork's commits under the parent repo's name, so `raw.githubusercontent.com/Homebrew/install/HEAD/
install.sh` is listed, not the repo at any commit. `strict.yaml` lists no installers: a production
gate takes no checkpoint whose card pipes a script into a shell.

### Adding one in a reviewed pull request

1. Edit the section in `policies/default.yaml` (and `strict.yaml` for identities: a test keeps
   them equal), with a comment citing the vendor's or tool's page.
2. Add a decision case in `policies/tests/default/` that the entry changes (`hfvet policy test`).
3. Run the identity tests: no real third-party org may become a lookalike.
4. `hfvet policy diff OLD NEW REPORTS...` on stored reports shows every verdict that changes.
"""
