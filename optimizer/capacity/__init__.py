"""`podplan capacity`: the largest number of extra copies of one or more pod templates that fit, proven
(optimizer.capacity.core), beside kube-scheduler's greedy count as cluster-capacity computes it."""
from .core import CapacityAnswer, NeverFits, TemplateAnswer, capacity, verify_answer
from .templates import Template, load_templates, parse_ratio

__all__ = ["CapacityAnswer", "NeverFits", "Template", "TemplateAnswer", "capacity", "load_templates", "parse_ratio",
           "verify_answer"]
