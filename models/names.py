"""The API server's syntax rules for names, namespaces, label keys and label values
(k8s.io/apimachinery/pkg/util/validation): each check returns "" when the text is valid, else the rule it
breaks, worded for a user. Used by models.parse in strict mode only: upstream's own plugin tests (the
conformance cases) use names a real API server would reject."""
from __future__ import annotations

import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

DNS1123_LABEL_RULE = ("must be a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and "
                      "ending with a letter or digit")
DNS1123_SUBDOMAIN_RULE = ("must be a DNS-1123 subdomain: at most 253 characters, lowercase letters, digits, '-' "
                          "and '.', starting and ending with a letter or digit")
DNS1035_LABEL_RULE = ("must be a DNS-1035 label: at most 63 lowercase letters, digits and '-', starting with a "
                      "letter and ending with a letter or digit")
QUALIFIED_NAME_RULE = ("must be a qualified name: an optional DNS-1123 subdomain prefix and '/', then a name of at "
                       "most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit")
LABEL_VALUE_RULE = ("must be a valid label value: empty, or at most 63 letters, digits, '-', '_' and '.', "
                    "starting and ending with a letter or digit")


def dns1123_label(text: str) -> str:
    """Namespaces (and what must fit one DNS label)."""
    return "" if len(text) <= DNS1123_LABEL_MAX and _DNS1123_LABEL.match(text) else DNS1123_LABEL_RULE


def dns1123_subdomain(text: str) -> str:
    """The names of most kinds: Pod, Node, workloads, PodDisruptionBudget, PriorityClass, PodGroup."""
    return "" if len(text) <= DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN.match(text) else DNS1123_SUBDOMAIN_RULE


def dns1035_label(text: str) -> str:
    """Service names (ValidateServiceName): a DNS label that starts with a letter."""
    return "" if len(text) <= DNS1123_LABEL_MAX and _DNS1035_LABEL.match(text) else DNS1035_LABEL_RULE


def qualified_name(text: str) -> str:
    """Label keys (and annotation keys): `[prefix/]name`, the prefix a DNS-1123 subdomain."""
    prefix, slash, name = text.rpartition("/")
    if slash and (not prefix or dns1123_subdomain(prefix)):
        return QUALIFIED_NAME_RULE
    if len(name) > QUALIFIED_NAME_MAX or not _QUALIFIED_NAME_PART.match(name):
        return QUALIFIED_NAME_RULE
    return ""


def label_value(text: str) -> str:
    return "" if len(text) <= LABEL_VALUE_MAX and _LABEL_VALUE.match(text) else LABEL_VALUE_RULE
