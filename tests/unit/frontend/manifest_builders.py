"""A realistic manifest of every built-in kind kubemu serves, as clients send them.

Workloads carry what ``kubectl create ... --dry-run=client -o json`` writes (``creationTimestamp:
null``, ``resources: {}``, ``strategy: {}``, ``status: {}``) plus the fields a user's YAML usually
sets; objects a controller or kubectl reads back and sends again (Deployment, Pod, Node, Event,
Lease) carry what the server filled in (status, managedFields, uid, timestamps). Used by
``test_fieldvalidation.py``: each must pass strict field validation unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

TIME = "2024-05-01T10:00:00Z"
LABELS = {"app": "web", "tier": "frontend"}
SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}],
}


def meta(name: str = "web", namespace: str | None = "default", **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "creationTimestamp": None, "labels": dict(LABELS)}
    if namespace:
        m["namespace"] = namespace
    m.update(extra)
    return m


def container(name: str = "web") -> dict[str, Any]:
    probe = {
        "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
        "initialDelaySeconds": 5,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    return {
        "name": name,
        "image": "nginx:1.25",
        "imagePullPolicy": "IfNotPresent",
        "command": ["nginx"],
        "args": ["-g", "daemon off;"],
        "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
        "env": [
            {"name": "MODE", "value": "prod"},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
            {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password", "optional": False}}},
        ],
        "envFrom": [{"configMapRef": {"name": "web-config"}}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": 1, "memory": "256Mi"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
        "livenessProbe": probe,
        "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 5},
        "startupProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "failureThreshold": 30},
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "allowPrivilegeEscalation": False},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def pod_spec() -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}
    return {
        "containers": [container()],
        "initContainers": [{"name": "init", "image": "busybox", "command": ["true"], "resources": {}}],
        "volumes": [
            {"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
            {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
        ],
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "serviceAccountName": "web",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": term}],
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            },
        },
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
        "securityContext": {"fsGroup": 2000},
        "priorityClassName": "high",
        "schedulerName": "default-scheduler",
    }


def template() -> dict[str, Any]:
    return {"metadata": {"creationTimestamp": None, "labels": dict(LABELS)}, "spec": pod_spec()}


def _workloads() -> dict[str, dict[str, Any]]:
    return {
        "Pod": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta(uid="6a1b0c3e-0000-4000-8000-000000000001", resourceVersion="42", creationTimestamp=TIME),
            "spec": {**pod_spec(), "nodeName": "node-1"},
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": TIME}],
                "hostIP": "10.0.0.2",
                "podIP": "10.244.0.5",
                "podIPs": [{"ip": "10.244.0.5"}],
                "startTime": TIME,
                "qosClass": "Burstable",
                "containerStatuses": [
                    {
                        "name": "web",
                        "ready": True,
                        "restartCount": 0,
                        "image": "nginx:1.25",
                        "imageID": "docker.io/library/nginx@sha256:0123",
                        "containerID": "containerd://abc",
                        "started": True,
                        "state": {"running": {"startedAt": TIME}},
                        "lastState": {},
                    }
                ],
            },
        },
        "Deployment": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(annotations={"deployment.kubernetes.io/revision": "1"}, generation=1),
            "spec": {
                "replicas": 3,
                "selector": SELECTOR,
                "template": template(),
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
                "minReadySeconds": 5,
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            "status": {
                "observedGeneration": 1,
                "replicas": 3,
                "updatedReplicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "lastUpdateTime": TIME,
                        "lastTransitionTime": TIME,
                        "reason": "MinimumReplicasAvailable",
                        "message": "Deployment has minimum availability.",
                    }
                ],
            },
        },
        "ReplicaSet": {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta(
                ownerReferences=[
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "web",
                        "uid": "6a1b0c3e-0000-4000-8000-000000000002",
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ]
            ),
            "spec": {"replicas": 2, "selector": SELECTOR, "template": template(), "minReadySeconds": 0},
            "status": {
                "replicas": 2,
                "fullyLabeledReplicas": 2,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "observedGeneration": 1,
            },
        },
        "DaemonSet": {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta(),
            "spec": {
                "selector": SELECTOR,
                "template": template(),
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                "revisionHistoryLimit": 10,
            },
            "status": {
                "currentNumberScheduled": 3,
                "desiredNumberScheduled": 3,
                "numberMisscheduled": 0,
                "numberReady": 3,
            },
        },
        "StatefulSet": {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta(),
            "spec": {
                "serviceName": "web",
                "replicas": 3,
                "selector": SELECTOR,
                "template": template(),
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                    }
                ],
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
            },
            "status": {"replicas": 0, "availableReplicas": 0},
        },
        "ReplicationController": {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": meta(),
            "spec": {"replicas": 2, "selector": {"app": "web"}, "template": template()},
            "status": {"replicas": 0},
        },
        "PodTemplate": {"apiVersion": "v1", "kind": "PodTemplate", "metadata": meta(), "template": template()},
        "Job": {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta("pi"),
            "spec": {
                "parallelism": 2,
                "completions": 4,
                "completionMode": "Indexed",
                "backoffLimit": 6,
                "activeDeadlineSeconds": 600,
                "ttlSecondsAfterFinished": 100,
                "template": {"metadata": {"creationTimestamp": None}, "spec": {**pod_spec(), "restartPolicy": "Never"}},
            },
            "status": {},
        },
        "CronJob": {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta("nightly"),
            "spec": {
                "schedule": "0 3 * * *",
                "timeZone": "Etc/UTC",
                "concurrencyPolicy": "Forbid",
                "startingDeadlineSeconds": 200,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "suspend": False,
                "jobTemplate": {
                    "metadata": {"creationTimestamp": None, "name": "nightly"},
                    "spec": {
                        "template": {
                            "metadata": {"creationTimestamp": None},
                            "spec": {**pod_spec(), "restartPolicy": "OnFailure"},
                        }
                    },
                },
            },
            "status": {"lastScheduleTime": TIME},
        },
        "ControllerRevision": {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": meta("web-6d4cf56db6"),
            "data": {
                "spec": {"template": {"$patch": "replace", "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
            },
            "revision": 1,
        },
    }


def _core() -> dict[str, dict[str, Any]]:
    return {
        "Node": {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": meta("node-1", None, labels={"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux"}),
            "spec": {
                "podCIDR": "10.244.1.0/24",
                "podCIDRs": ["10.244.1.0/24"],
                "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
                "unschedulable": False,
            },
            "status": {
                "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110"},
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastHeartbeatTime": TIME,
                        "lastTransitionTime": TIME,
                        "reason": "KubeletReady",
                        "message": "kubelet is posting ready status",
                    }
                ],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}, {"type": "Hostname", "address": "node-1"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "machineID": "m",
                    "systemUUID": "s",
                    "bootID": "b",
                    "kernelVersion": "6.1.0",
                    "osImage": "Debian",
                    "containerRuntimeVersion": "containerd://1.7.0",
                    "kubeletVersion": "v1.33.0",
                    "kubeProxyVersion": "v1.33.0",
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                },
            },
        },
        "Namespace": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": meta("team-a", None),
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        },
        "Event": {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": meta("web.17c8a1b2c3d4e5f6"),
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "web",
                "namespace": "default",
                "uid": "6a1b0c3e-0000-4000-8000-000000000001",
                "fieldPath": "spec.containers{web}",
            },
            "reason": "Pulled",
            "message": 'Container image "nginx:1.25" already present on machine',
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": TIME,
            "lastTimestamp": TIME,
            "count": 1,
            "type": "Normal",
            "eventTime": None,
            "reportingComponent": "kubelet",
            "reportingInstance": "node-1",
        },
        "ConfigMap": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta("web-config"),
            "data": {"nginx.conf": "worker_processes 1;"},
            "binaryData": {"logo": "iVBORw0KGgo="},
            "immutable": False,
        },
        "Secret": {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": meta("db"),
            "type": "Opaque",
            "data": {"password": "czNjcjN0", "user": "YWRtaW4="},
            "stringData": {"host": "db.local"},
        },
        "Service": {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta(),
            "spec": {
                "type": "NodePort",
                "selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP", "nodePort": 30080}],
                "sessionAffinity": "None",
                "externalTrafficPolicy": "Cluster",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
            },
            "status": {"loadBalancer": {}},
        },
        "ServiceAccount": {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": meta(),
            "automountServiceAccountToken": False,
            "imagePullSecrets": [{"name": "registry"}],
            "secrets": [{"name": "web-token"}],
        },
        "Endpoints": {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": meta(),
            "subsets": [
                {
                    "addresses": [
                        {
                            "ip": "10.244.0.5",
                            "nodeName": "node-1",
                            "targetRef": {"kind": "Pod", "name": "web", "namespace": "default"},
                        }
                    ],
                    "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
                }
            ],
        },
        "PersistentVolume": {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": meta("pv-1", None),
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "standard",
                "hostPath": {"path": "/mnt/data", "type": "DirectoryOrCreate"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}
                                ]
                            }
                        ]
                    }
                },
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Available"},
        },
        "PersistentVolumeClaim": {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": meta("data"),
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "standard",
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        },
        "ResourceQuota": {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta("quota"),
            "spec": {
                "hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "16Gi"},
                "scopes": ["NotTerminating"],
            },
            "status": {"hard": {"pods": "10"}, "used": {"pods": "2"}},
        },
        "LimitRange": {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": meta("limits"),
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "500m"},
                        "defaultRequest": {"cpu": "100m"},
                        "max": {"memory": "1Gi"},
                        "min": {"memory": "16Mi"},
                    }
                ]
            },
        },
    }


def _cluster() -> dict[str, dict[str, Any]]:
    rule = {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]}
    subject = {"kind": "ServiceAccount", "name": "web", "namespace": "default"}
    return {
        "PriorityClass": {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": meta("high", None),
            "value": 1000000,
            "globalDefault": False,
            "description": "For the web tier.",
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "PodDisruptionBudget": {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": meta(),
            "spec": {
                "minAvailable": "50%",
                "selector": {"matchLabels": {"app": "web"}},
                "unhealthyPodEvictionPolicy": "AlwaysAllow",
            },
            "status": {
                "currentHealthy": 3,
                "desiredHealthy": 2,
                "disruptionsAllowed": 1,
                "expectedPods": 3,
                "observedGeneration": 1,
            },
        },
        "Lease": {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": meta("node-1", "kube-node-lease"),
            "spec": {
                "holderIdentity": "node-1",
                "leaseDurationSeconds": 40,
                "renewTime": "2024-05-01T10:00:00.000000Z",
                "acquireTime": "2024-05-01T09:00:00.000000Z",
                "leaseTransitions": 0,
            },
        },
        "HorizontalPodAutoscaler": {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": meta(),
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2,
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
                    }
                ],
                "behavior": {
                    "scaleDown": {
                        "stabilizationWindowSeconds": 300,
                        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                    }
                },
            },
            "status": {"currentReplicas": 0, "desiredReplicas": 0},
        },
        "EndpointSlice": {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": meta("web-abcde", labels={"kubernetes.io/service-name": "web"}),
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": ["10.244.0.5"],
                    "conditions": {"ready": True, "serving": True, "terminating": False},
                    "nodeName": "node-1",
                    "zone": "a",
                    "targetRef": {"kind": "Pod", "name": "web", "namespace": "default"},
                }
            ],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
        },
        "StorageClass": {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta("standard", None),
            "provisioner": "rancher.io/local-path",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
            "parameters": {"type": "local"},
        },
        "CSINode": {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": meta("node-1", None),
            "spec": {
                "drivers": [
                    {
                        "name": "csi.example.com",
                        "nodeID": "node-1",
                        "topologyKeys": ["topology.kubernetes.io/zone"],
                        "allocatable": {"count": 16},
                    }
                ]
            },
        },
        "CSIDriver": {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": meta("csi.example.com", None),
            "spec": {
                "attachRequired": True,
                "podInfoOnMount": False,
                "volumeLifecycleModes": ["Persistent"],
                "fsGroupPolicy": "File",
            },
        },
        "CSIStorageCapacity": {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": meta("cap-1"),
            "storageClassName": "standard",
            "capacity": "100Gi",
            "maximumVolumeSize": "10Gi",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}},
        },
        "VolumeAttachment": {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": meta("va-1", None),
            "spec": {"attacher": "csi.example.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}},
            "status": {"attached": False},
        },
        "Role": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta("reader"),
            "rules": [rule],
        },
        "RoleBinding": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta("reader"),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [subject],
        },
        "ClusterRole": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta("reader", None),
            "rules": [rule, {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate": "true"}}]},
        },
        "ClusterRoleBinding": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta("reader", None),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
            "subjects": [subject],
        },
        "CustomResourceDefinition": crd(),
    }


def _groups() -> dict[str, dict[str, Any]]:
    """networking.k8s.io, apiregistration.k8s.io, admissionregistration.k8s.io, node.k8s.io."""

    def backend() -> dict[str, Any]:
        return {"service": {"name": "web", "port": {"number": 80}}}

    rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}
    client = {"service": {"namespace": "webhooks", "name": "policy", "path": "/validate", "port": 443}}
    webhook = {
        "name": "pod-policy.example.com",
        "clientConfig": client,
        "rules": [{**rule, "resources": ["pods"], "scope": "Namespaced"}],
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "timeoutSeconds": 5,
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "namespaceSelector": {"matchLabels": {"policy": "enforced"}},
        "objectSelector": {},
        "matchConditions": [{"name": "not-system", "expression": "!object.metadata.name.startsWith('system-')"}],
    }
    return {
        "Ingress": {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": meta(annotations={"nginx.ingress.kubernetes.io/rewrite-target": "/"}),
            "spec": {
                "ingressClassName": "nginx",
                "defaultBackend": backend(),
                "tls": [{"hosts": ["web.example.com"], "secretName": "web-tls"}],
                "rules": [
                    {
                        "host": "web.example.com",
                        "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend()}]},
                    }
                ],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.10", "ports": [{"port": 80, "protocol": "TCP"}]}]}},
        },
        "IngressClass": {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IngressClass",
            "metadata": meta("nginx", None, annotations={"ingressclass.kubernetes.io/is-default-class": "true"}),
            "spec": {
                "controller": "k8s.io/ingress-nginx",
                "parameters": {
                    "apiGroup": "k8s.example.com",
                    "kind": "IngressParameters",
                    "name": "external-lb",
                    "scope": "Cluster",
                },
            },
        },
        "NetworkPolicy": {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta("db"),
            "spec": {
                "podSelector": {"matchLabels": {"role": "db"}},
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [
                    {
                        "from": [
                            {"ipBlock": {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}},
                            {"namespaceSelector": {"matchLabels": {"project": "web"}}},
                            {"podSelector": {"matchLabels": {"role": "frontend"}}},
                        ],
                        "ports": [{"protocol": "TCP", "port": 6379}],
                    }
                ],
                "egress": [
                    {
                        "to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}],
                        "ports": [{"protocol": "TCP", "port": 5978, "endPort": 6000}],
                    }
                ],
            },
        },
        "APIService": {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": meta("v1beta1.custom.metrics.k8s.io", None),
            "spec": {
                "service": {"namespace": "monitoring", "name": "prometheus-adapter", "port": 443},
                "group": "custom.metrics.k8s.io",
                "version": "v1beta1",
                "insecureSkipTLSVerify": True,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        },
        "MutatingWebhookConfiguration": {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": meta("pod-policy", None),
            "webhooks": [{**webhook, "reinvocationPolicy": "Never"}],
        },
        "ValidatingWebhookConfiguration": {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": meta("pod-policy", None),
            "webhooks": [webhook],
        },
        "ValidatingAdmissionPolicy": {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": meta("replica-limit", None),
            "spec": {
                "failurePolicy": "Fail",
                "paramKind": {"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"},
                "matchConstraints": {"resourceRules": [{**rule, "apiGroups": ["apps"], "resources": ["deployments"]}]},
                "variables": [{"name": "replicas", "expression": "object.spec.replicas"}],
                "validations": [
                    {
                        "expression": "variables.replicas <= params.maxReplicas",
                        "message": "too many replicas",
                        "reason": "Invalid",
                    }
                ],
                "auditAnnotations": [{"key": "replicas", "valueExpression": "string(variables.replicas)"}],
            },
        },
        "ValidatingAdmissionPolicyBinding": {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": meta("replica-limit-test", None),
            "spec": {
                "policyName": "replica-limit",
                "validationActions": ["Deny", "Audit"],
                "paramRef": {"name": "replica-limit-test", "namespace": "default", "parameterNotFoundAction": "Deny"},
                "matchResources": {"namespaceSelector": {"matchLabels": {"environment": "test"}}},
            },
        },
        "CertificateSigningRequest": {
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": meta("web-client", None),
            "spec": {
                "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
                "signerName": "kubernetes.io/kube-apiserver-client",
                "expirationSeconds": 86400,
                "usages": ["client auth"],
            },
            "status": {
                "conditions": [
                    {
                        "type": "Approved",
                        "status": "True",
                        "reason": "KubectlApprove",
                        "message": "This CSR was approved by kubectl certificate approve.",
                        "lastUpdateTime": TIME,
                        "lastTransitionTime": TIME,
                    }
                ]
            },
        },
        "RuntimeClass": {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": meta("gvisor", None),
            "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            "scheduling": {
                "nodeSelector": {"sandbox.example.com/runtime": "gvisor"},
                "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
    }


def widget_schema() -> dict[str, Any]:
    """The openAPIV3Schema of the ``Widget`` custom resource (example.com/v1)."""
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "replicas": {"type": "integer", "minimum": 0},
                    "ratio": {"type": "number"},
                    "paused": {"type": "boolean", "default": False},
                    "port": {"x-kubernetes-int-or-string": True},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "ports": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                        },
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "config": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {"level": {"type": "integer"}},
                    },
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "properties": {"spec": {"type": "object"}},
                    },
                    "note": {"type": "string", "nullable": True},
                },
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    }


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta("widgets.example.com", None),
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
                "shortNames": ["wd"],
                "categories": ["all"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": widget_schema()},
                    "subresources": {
                        "status": {},
                        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
                    },
                    "additionalPrinterColumns": [{"name": "Size", "type": "string", "jsonPath": ".spec.size"}],
                }
            ],
        },
    }


def _kubemu() -> dict[str, dict[str, Any]]:
    """kubemu's own kinds, with every field their schema (cluster/api/schema_kubemu.py) knows."""
    filters = [
        {
            "plugin": "NodeResourcesFit",
            "point": "Filter",
            "rejected": 2,
            "reasons": [{"reason": "Insufficient cpu", "count": 2, "nodes": ["n-0", "n-1"]}],
        }
    ]
    top = [{"node": "n-2", "raw": 80, "normalized": 80, "weighted": 80}]
    victim = {"namespace": "default", "name": "low", "priority": 0, "why": "priority 0 is below the preemptor's 10"}
    preemption = {
        "message": "0/3 nodes are available: 3 Insufficient cpu.",
        "nominatedNode": "n-0",
        "victimCount": 1,
        "victims": [victim],
        "clearedNominations": ["default/other"],
    }
    failed = {"attempt": 1, "time": "2026-01-01T00:00:00Z", "result": "Preempting", "message": "0/3 nodes", "nodes": 3}
    placed = {
        "attempt": 2,
        "time": "2026-01-01T00:00:01Z",
        "result": "Scheduled",
        "node": "n-2",
        "note": "",
        "nodes": 3,
        "evaluated": 3,
        "feasible": 2,
        "filters": filters,
        "scores": [{"plugin": "NodeResourcesFit", "weight": 1, "top": top}],
        "ranking": [{"node": "n-2", "total": 80, "byPlugin": {"NodeResourcesFit": 80}}],
        "chosenTotal": 80,
    }
    status = {
        "podUID": "0d9c6c1e-5f0b-4a53-9f43-1f0e2b9c6a11",
        "schedulerName": "default-scheduler",
        "attempts": 2,
        "result": "Scheduled",
        "node": "n-2",
        "reason": "score 80, best of 2 feasible",
        "lastAttemptTime": "2026-01-01T00:00:01Z",
        "history": [dict(failed, filters=filters, preemption=preemption), placed],
    }
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": status["podUID"]}
    return {
        "SchedulingResult": {
            "apiVersion": "kubemu.io/v1alpha1",
            "kind": "SchedulingResult",
            "metadata": meta(ownerReferences=[owner]),
            "status": status,
        }
    }


def manifests() -> dict[str, dict[str, Any]]:
    """Kind -> a fresh copy of its manifest."""
    return copy.deepcopy({**_workloads(), **_core(), **_cluster(), **_groups(), **_kubemu()})
