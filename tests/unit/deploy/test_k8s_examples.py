"""deploy/k8s/*.yaml, checked without a cluster: they parse, serving pods reach the Hub only through
hfvet's /hub on the Service hfvet.yaml declares, the NetworkPolicies select the pods they are meant
for, every HFVET_* variable is a real setting, and every hfvet command line parses with the real CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from app.setting_checks import ENV_PREFIX
from app.settings import Settings
from tests.unit.deploy.test_compose import parses

K8S = Path(__file__).resolve().parents[3] / "deploy" / "k8s"
EXPECTED_KINDS = {
    "hfvet.yaml": ["Namespace", "PersistentVolumeClaim", "Job", "Deployment", "Deployment", "Service"],
    "serving-pod.yaml": ["Namespace", "Deployment"],
    "networkpolicy.yaml": ["NetworkPolicy", "NetworkPolicy"],
    "init-container.yaml": ["Deployment"],
}
SERVING_FILES = ("serving-pod.yaml", "init-container.yaml")
WORKLOADS = ("Deployment", "Job")


def documents(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text()) if doc is not None]


def all_documents() -> list[dict[str, Any]]:
    return [doc for name in EXPECTED_KINDS for doc in documents(name)]


def pod_templates(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(namespace, pod template) of every workload."""
    for doc in docs:
        if doc["kind"] in WORKLOADS:
            yield doc["metadata"]["namespace"], doc["spec"]["template"]


def containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    spec = template["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def env_values(container: dict[str, Any]) -> dict[str, Any]:
    return {item["name"]: item.get("value", item.get("valueFrom")) for item in container.get("env", [])}


def hfvet_service() -> dict[str, Any]:
    (service,) = [doc for doc in documents("hfvet.yaml") if doc["kind"] == "Service"]
    return service


def api_container_port() -> int:
    (api,) = [
        doc for doc in documents("hfvet.yaml") if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "hfvet"
    ]
    (port,) = api["spec"]["template"]["spec"]["containers"][0]["ports"]
    return int(port["containerPort"])


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def test_the_examples_are_the_files_this_test_knows() -> None:
    assert sorted(path.name for path in K8S.glob("*.yaml")) == sorted(EXPECTED_KINDS)


@pytest.mark.parametrize("name", sorted(EXPECTED_KINDS))
def test_every_document_parses_and_is_of_the_expected_kind(name: str) -> None:
    docs = documents(name)
    assert [doc["kind"] for doc in docs] == EXPECTED_KINDS[name]
    for doc in docs:
        assert doc["apiVersion"] and doc["metadata"]["name"]


def test_workloads_select_their_own_pod_labels() -> None:
    for doc in all_documents():
        if doc["kind"] == "Deployment":
            assert selects(doc["spec"]["selector"]["matchLabels"], doc["spec"]["template"]["metadata"]["labels"])


@pytest.mark.parametrize("name", SERVING_FILES)
def test_serving_pods_reach_the_hub_only_through_hfvet_hub(name: str) -> None:
    service = hfvet_service()
    (port,) = service["spec"]["ports"]
    host = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    endpoints = [
        env_values(container)["HF_ENDPOINT"]
        for _, template in pod_templates(documents(name))
        for container in containers(template)
        if "HF_ENDPOINT" in env_values(container)
    ]
    assert endpoints  # the check below cannot pass by finding nothing
    for endpoint in endpoints:
        url = urlsplit(endpoint)
        assert (url.scheme, url.hostname, url.port, url.path) == ("http", host, port["port"], "/hub")


def test_the_service_reaches_the_api_pods_on_their_port() -> None:
    service = hfvet_service()
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] == "http" and api_container_port() == port["port"]
    api_labels = [
        template["metadata"]["labels"]
        for _, template in pod_templates(documents("hfvet.yaml"))
        if template["spec"]["containers"][0]["args"][0] == "serve"
    ]
    assert len(api_labels) == 1 and selects(service["spec"]["selector"], api_labels[0])


def test_the_serving_policy_governs_the_serving_pods_and_lets_them_reach_only_hfvet_and_dns() -> None:
    serving, _hfvet = documents("networkpolicy.yaml")
    namespace = serving["metadata"]["namespace"]
    governed = [
        template for name in SERVING_FILES for ns, template in pod_templates(documents(name)) if ns == namespace
    ]
    assert governed and all(
        selects(serving["spec"]["podSelector"]["matchLabels"], t["metadata"]["labels"]) for t in governed
    )
    to_hfvet, to_dns = serving["spec"]["egress"]
    (peer,) = to_hfvet["to"]
    assert peer["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": hfvet_service()["metadata"]["namespace"]
    }
    assert selects(peer["podSelector"]["matchLabels"], hfvet_service()["spec"]["selector"])
    assert [p["port"] for p in to_hfvet["ports"]] == [api_container_port()]
    assert {p["port"] for p in to_dns["ports"]} == {53} and len(serving["spec"]["egress"]) == 2


def test_the_hfvet_policy_governs_the_api_and_worker_pods() -> None:
    _serving, hfvet = documents("networkpolicy.yaml")
    selector = hfvet["spec"]["podSelector"]["matchLabels"]
    templates = [t for ns, t in pod_templates(documents("hfvet.yaml")) if ns == hfvet["metadata"]["namespace"]]
    components = {
        t["metadata"]["labels"]["app.kubernetes.io/component"]
        for t in templates
        if selects(selector, t["metadata"]["labels"])
    }
    assert {"api", "worker"} <= components
    assert {443, 53, 5432} == {p["port"] for rule in hfvet["spec"]["egress"] for p in rule["ports"]}


def test_every_hfvet_variable_is_a_setting() -> None:
    names = {
        name
        for _, template in pod_templates(all_documents())
        for container in containers(template)
        for name in env_values(container)
        if name.startswith(ENV_PREFIX)
    }
    fields = {f"{ENV_PREFIX}{field.upper()}" for field in Settings.model_fields}
    assert names and names - fields == set()


def test_every_hfvet_container_runs_a_command_the_cli_parses() -> None:
    commands = [
        container["args"]
        for _, template in pod_templates(all_documents())
        for container in containers(template)
        if container["image"].startswith("hfvet:")
    ]
    assert {argv[0] for argv in commands} == {"db", "serve", "worker", "download"}
    for argv in commands:
        parses(argv)


def test_the_init_container_downloads_a_pinned_revision_through_a_server() -> None:
    ((_, template),) = pod_templates(documents("init-container.yaml"))
    (init,) = template["spec"]["initContainers"]
    args = init["args"]
    assert args[:2] == ["download", "nvidia/DeepSeek-V4-Flash-NVFP4"]
    options = dict(zip(args[2::2], args[3::2], strict=True))
    assert set(options) == {"--revision", "--local-dir", "--server"}
    mounts = {m["mountPath"] for m in init["volumeMounts"]}
    assert any(options["--local-dir"].startswith(mount + "/") for mount in mounts)
    served = template["spec"]["containers"][0]
    assert served["args"][0] == options["--local-dir"] and env_values(served)["HF_HUB_OFFLINE"] == "1"
