"""podplan: a batch placement optimizer for Kubernetes with kube-scheduler's semantics, on OR-Tools CP-SAT.

Installed, the project's folders live under this package: `podplan.models` (the Kubernetes object model),
`podplan.optimizer` (the rules, the simulator, the CP-SAT search, the verifier) and `podplan.cli`.
"""
__version__ = "0.2.0"
# The kube-scheduler whose semantics podplan models: its plugins' reasons and scores, FitError's words, its
# default feature gates (checked pod by pod against that release's own framework, docs/kube-scheduler.md).
KUBE_VERSION = "1.35.4"
