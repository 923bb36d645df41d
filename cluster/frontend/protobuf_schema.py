"""The protobuf schema kubemu reads: field numbers of upstream's ``generated.proto`` as JSON names.

Owns the facts ``cluster/frontend/protobuf.py`` decodes by (that module is the only reader):
for every message, which field number carries which JSON field of which type, and which
(apiVersion, kind) pairs a request body may name. The numbers come from the ``generated.proto``
files of k8s.io/api (core, apps, batch, policy, scheduling, coordination, events, autoscaling)
and k8s.io/apimachinery (meta/v1, resource, intstr, runtime); the JSON names and which zero
values matter come from the same fields' Go struct tags. A field missing here is skipped when
decoding, so the table leaves out what kubemu never needs (the cloud volume sources, ephemeral
containers, PersistentVolumeClaim status, alpha scheduling fields).

One message is a comma-separated list of ``<number> <jsonName>[:<type>][!]``:

- type, by default ``s``: ``s`` string, ``b`` bytes (base64 in JSON), ``i`` int32/int64 varint,
  ``bool``, ``d`` double, ``f`` float; ``Quantity``, ``Time``, ``MicroTime``, ``IntOrString``,
  ``Duration``, ``Raw`` (a RawExtension or FieldsV1: JSON bytes); or another message of this table.
- ``[T]`` a repeated field, ``{T}`` a ``map<string, T>``.
- ``...`` as the JSON name: the message is embedded, its fields belong to the parent
  (``Volume`` carries its ``VolumeSource`` inline, ``Probe`` its ``ProbeHandler``).
- ``!``: a present zero value is kept. Upstream's encoder writes every non-pointer field, zero or
  not, so presence alone cannot tell a set field from an unset one; ``!`` marks the fields whose
  zero the JSON API would carry too (a Go pointer such as ``replicas``, or a field without
  ``omitempty`` such as ``containerPort``). Other scalar zeros are dropped, like JSON's omitempty.
  A present message is always kept, even empty (``emptyDir: {}`` means something).
"""

from __future__ import annotations

# Message names are upstream's, without the package; the two that differ between
# core/v1 and events.k8s.io/v1 carry an ``events.`` prefix.
MESSAGES: dict[str, str] = {
    "Namespace": "1 metadata:ObjectMeta, 2 spec:NamespaceSpec, 3 status:NamespaceStatus",
    "ConfigMap": "1 metadata:ObjectMeta, 2 data:{s}, 3 binaryData:{b}, 4 immutable:bool!",
    "Secret": "1 metadata:ObjectMeta, 2 data:{b}, 3 type, 4 stringData:{s}, 5 immutable:bool!",
    "Service": "1 metadata:ObjectMeta, 2 spec:ServiceSpec, 3 status:ServiceStatus",
    "ServiceAccount": (
        "1 metadata:ObjectMeta, 2 secrets:[ObjectReference], "
        "3 imagePullSecrets:[LocalObjectReference], 4 automountServiceAccountToken:bool!"
    ),
    "Pod": "1 metadata:ObjectMeta, 2 spec:PodSpec, 3 status:PodStatus",
    "Binding": "1 metadata:ObjectMeta, 2 target:ObjectReference",
    "Event": (
        "1 metadata:ObjectMeta, 2 involvedObject:ObjectReference, 3 reason, 4 message, 5 source:EventSource, "
        "6 firstTimestamp:Time, 7 lastTimestamp:Time, 8 count:i, 9 type, 10 eventTime:MicroTime, "
        "11 series:EventSeries, 12 action, 13 related:ObjectReference, 14 reportingComponent!, "
        "15 reportingInstance!"
    ),
    "PriorityClass": "1 metadata:ObjectMeta, 2 value:i!, 3 globalDefault:bool, 4 description, 5 preemptionPolicy!",
    "Deployment": "1 metadata:ObjectMeta, 2 spec:DeploymentSpec, 3 status:DeploymentStatus",
    "ReplicaSet": "1 metadata:ObjectMeta, 2 spec:ReplicaSetSpec, 3 status:ReplicaSetStatus",
    "DaemonSet": "1 metadata:ObjectMeta, 2 spec:DaemonSetSpec, 3 status:DaemonSetStatus",
    "StatefulSet": "1 metadata:ObjectMeta, 2 spec:StatefulSetSpec, 3 status:StatefulSetStatus",
    "Job": "1 metadata:ObjectMeta, 2 spec:JobSpec, 3 status:JobStatus",
    "CronJob": "1 metadata:ObjectMeta, 2 spec:CronJobSpec, 3 status:CronJobStatus",
    "HorizontalPodAutoscaler": (
        "1 metadata:ObjectMeta, 2 spec:HorizontalPodAutoscalerSpec, 3 status:HorizontalPodAutoscalerStatus"
    ),
    # autoscaling/v2 (what kubectl autoscale sends): the Resource and ContainerResource metrics.
    "HorizontalPodAutoscalerSpec": (
        "1 scaleTargetRef:CrossVersionObjectReference, 2 minReplicas:i!, 3 maxReplicas:i!, "
        "4 metrics:[MetricSpec], 5 behavior:HorizontalPodAutoscalerBehavior"
    ),
    "CrossVersionObjectReference": "1 kind, 2 name, 3 apiVersion",
    "MetricSpec": "1 type, 4 resource:ResourceMetricSource, 7 containerResource:ContainerResourceMetricSource",
    "ResourceMetricSource": "1 name, 2 target:MetricTarget",
    "ContainerResourceMetricSource": "1 name, 2 target:MetricTarget, 3 container",
    "MetricTarget": "1 type, 2 value:Quantity, 3 averageValue:Quantity, 4 averageUtilization:i!",
    "HorizontalPodAutoscalerBehavior": "1 scaleUp:HPAScalingRules, 2 scaleDown:HPAScalingRules",
    "HPAScalingRules": (
        "3 stabilizationWindowSeconds:i!, 1 selectPolicy, 2 policies:[HPAScalingPolicy], 4 tolerance:Quantity"
    ),
    "HPAScalingPolicy": "1 type, 2 value:i!, 3 periodSeconds:i!",
    "HorizontalPodAutoscalerStatus": (
        "1 observedGeneration:i, 2 lastScaleTime:Time, 3 currentReplicas:i, 4 desiredReplicas:i!, "
        "5 currentMetrics:[MetricStatus], 6 conditions:[HorizontalPodAutoscalerCondition]"
    ),
    "MetricStatus": "1 type, 4 resource:ResourceMetricStatus",
    "ResourceMetricStatus": "1 name, 2 current:MetricValueStatus",
    "MetricValueStatus": "1 value:Quantity, 2 averageValue:Quantity, 3 averageUtilization:i!",
    "HorizontalPodAutoscalerCondition": (
        "1 type, 2 status, 3 lastTransitionTime:Time, 4 reason, 5 message, 6 observedGeneration:i"
    ),
    "PodDisruptionBudget": (
        "1 metadata:ObjectMeta, 2 spec:PodDisruptionBudgetSpec, 3 status:PodDisruptionBudgetStatus"
    ),
    "Eviction": "1 metadata:ObjectMeta, 2 deleteOptions:DeleteOptions",
    "Lease": "1 metadata:ObjectMeta, 2 spec:LeaseSpec",
    "events.Event": (
        "1 metadata:ObjectMeta, 2 eventTime:MicroTime, 3 series:events.EventSeries, "
        "4 reportingController, 5 reportingInstance, 6 action, 7 reason, 8 regarding:ObjectReference, "
        "9 related:ObjectReference, 10 note, 11 type, 12 deprecatedSource:EventSource, "
        "13 deprecatedFirstTimestamp:Time, 14 deprecatedLastTimestamp:Time, 15 deprecatedCount:i"
    ),
    "Scale": "1 metadata:ObjectMeta, 2 spec:ScaleSpec, 3 status:ScaleStatus",
    "DeleteOptions": (
        "1 gracePeriodSeconds:i!, 2 preconditions:Preconditions, 3 orphanDependents:bool!, "
        "4 propagationPolicy!, 5 dryRun:[s], "
        "6 ignoreStoreReadErrorWithClusterBreakingPotential:bool!"
    ),
    "ObjectMeta": (
        "1 name, 2 generateName, 3 namespace, 4 selfLink, 5 uid, 6 resourceVersion, 7 generation:i, "
        "8 creationTimestamp:Time, 9 deletionTimestamp:Time, 10 deletionGracePeriodSeconds:i!, "
        "11 labels:{s}, 12 annotations:{s}, 13 ownerReferences:[OwnerReference], 14 finalizers:[s], "
        "17 managedFields:[ManagedFieldsEntry]"
    ),
    "NamespaceSpec": "1 finalizers:[s]",
    "NamespaceStatus": "1 phase, 2 conditions:[NamespaceCondition]",
    "ServiceSpec": (
        "1 ports:[ServicePort], 2 selector:{s}, 3 clusterIP, 4 type, 5 externalIPs:[s], "
        "7 sessionAffinity, 8 loadBalancerIP, 9 loadBalancerSourceRanges:[s], 10 externalName, "
        "11 externalTrafficPolicy, 12 healthCheckNodePort:i, 13 publishNotReadyAddresses:bool, "
        "14 sessionAffinityConfig:SessionAffinityConfig, 17 ipFamilyPolicy!, 18 clusterIPs:[s], "
        "19 ipFamilies:[s], 20 allocateLoadBalancerNodePorts:bool!, 21 loadBalancerClass!, "
        "22 internalTrafficPolicy!, 23 trafficDistribution!"
    ),
    "ServiceStatus": "1 loadBalancer:LoadBalancerStatus, 2 conditions:[Condition]",
    "ObjectReference": "1 kind, 2 namespace, 3 name, 4 uid, 5 apiVersion, 6 resourceVersion, 7 fieldPath",
    "LocalObjectReference": "1 name",
    "PodSpec": (
        "1 volumes:[Volume], 2 containers:[Container], 3 restartPolicy, 4 terminationGracePeriodSeconds:i!, "
        "5 activeDeadlineSeconds:i!, 6 dnsPolicy, 7 nodeSelector:{s}, 8 serviceAccountName, "
        "9 serviceAccount, 10 nodeName, 11 hostNetwork:bool, 12 hostPID:bool, 13 hostIPC:bool, "
        "14 securityContext:PodSecurityContext, 15 imagePullSecrets:[LocalObjectReference], 16 hostname, "
        "17 subdomain, 18 affinity:Affinity, 19 schedulerName, 20 initContainers:[Container], "
        "21 automountServiceAccountToken:bool!, 22 tolerations:[Toleration], 23 hostAliases:[HostAlias], "
        "24 priorityClassName, 25 priority:i!, 26 dnsConfig:PodDNSConfig, 27 shareProcessNamespace:bool!, "
        "28 readinessGates:[PodReadinessGate], 29 runtimeClassName!, 30 enableServiceLinks:bool!, "
        "31 preemptionPolicy!, 32 overhead:{Quantity}, "
        "33 topologySpreadConstraints:[TopologySpreadConstraint], 35 setHostnameAsFQDN:bool!, 36 os:PodOS, "
        "37 hostUsers:bool!, 38 schedulingGates:[PodSchedulingGate], 39 resourceClaims:[PodResourceClaim], "
        "40 resources:ResourceRequirements, 41 hostnameOverride!"
    ),
    "PodStatus": (
        "1 phase, 2 conditions:[PodCondition], 3 message, 4 reason, 5 hostIP, 6 podIP, 7 startTime:Time, "
        "8 containerStatuses:[ContainerStatus], 9 qosClass, 10 initContainerStatuses:[ContainerStatus], "
        "11 nominatedNodeName, 12 podIPs:[PodIP], 13 ephemeralContainerStatuses:[ContainerStatus], "
        "14 resize, 16 hostIPs:[HostIP], 17 observedGeneration:i, 19 allocatedResources:{Quantity}, "
        "20 resources:ResourceRequirements"
    ),
    "EventSource": "1 component, 2 host",
    "EventSeries": "1 count:i, 2 lastObservedTime:MicroTime",
    "DeploymentSpec": (
        "1 replicas:i!, 2 selector:LabelSelector, 3 template:PodTemplateSpec, "
        "4 strategy:DeploymentStrategy, 5 minReadySeconds:i, 6 revisionHistoryLimit:i!, "
        "7 paused:bool, 9 progressDeadlineSeconds:i!"
    ),
    "DeploymentStatus": (
        "1 observedGeneration:i, 2 replicas:i, 3 updatedReplicas:i, 4 availableReplicas:i, "
        "5 unavailableReplicas:i, 6 conditions:[DeploymentCondition], 7 readyReplicas:i, "
        "8 collisionCount:i!, 9 terminatingReplicas:i!"
    ),
    "ReplicaSetSpec": "1 replicas:i!, 2 selector:LabelSelector, 3 template:PodTemplateSpec, 4 minReadySeconds:i",
    "ReplicaSetStatus": (
        "1 replicas:i!, 2 fullyLabeledReplicas:i, 3 observedGeneration:i, 4 readyReplicas:i, "
        "5 availableReplicas:i, 6 conditions:[ReplicaSetCondition], 7 terminatingReplicas:i!"
    ),
    "DaemonSetSpec": (
        "1 selector:LabelSelector, 2 template:PodTemplateSpec, "
        "3 updateStrategy:DaemonSetUpdateStrategy, 4 minReadySeconds:i, 6 revisionHistoryLimit:i!"
    ),
    "DaemonSetStatus": (
        "1 currentNumberScheduled:i!, 2 numberMisscheduled:i!, 3 desiredNumberScheduled:i!, "
        "4 numberReady:i!, 5 observedGeneration:i, 6 updatedNumberScheduled:i, 7 numberAvailable:i, "
        "8 numberUnavailable:i, 9 collisionCount:i!, 10 conditions:[DaemonSetCondition]"
    ),
    "StatefulSetSpec": (
        "1 replicas:i!, 2 selector:LabelSelector, 3 template:PodTemplateSpec, "
        "4 volumeClaimTemplates:[PersistentVolumeClaim], 5 serviceName!, 6 podManagementPolicy, "
        "7 updateStrategy:StatefulSetUpdateStrategy, 8 revisionHistoryLimit:i!, "
        "9 minReadySeconds:i, "
        "10 persistentVolumeClaimRetentionPolicy:StatefulSetPersistentVolumeClaimRetentionPolicy, "
        "11 ordinals:StatefulSetOrdinals"
    ),
    "StatefulSetStatus": (
        "1 observedGeneration:i, 2 replicas:i!, 3 readyReplicas:i, 4 currentReplicas:i, "
        "5 updatedReplicas:i, 6 currentRevision, 7 updateRevision, 9 collisionCount:i!, "
        "10 conditions:[StatefulSetCondition], 11 availableReplicas:i!"
    ),
    "JobSpec": (
        "1 parallelism:i!, 2 completions:i!, 3 activeDeadlineSeconds:i!, 4 selector:LabelSelector, "
        "5 manualSelector:bool!, 6 template:PodTemplateSpec, 7 backoffLimit:i!, "
        "8 ttlSecondsAfterFinished:i!, 9 completionMode!, 10 suspend:bool!, "
        "11 podFailurePolicy:PodFailurePolicy, 12 backoffLimitPerIndex:i!, 13 maxFailedIndexes:i!, "
        "14 podReplacementPolicy!, 15 managedBy!, 16 successPolicy:SuccessPolicy"
    ),
    "JobStatus": (
        "1 conditions:[JobCondition], 2 startTime:Time, 3 completionTime:Time, 4 active:i, 5 succeeded:i, "
        "6 failed:i, 7 completedIndexes, 8 uncountedTerminatedPods:UncountedTerminatedPods, 9 ready:i!, "
        "10 failedIndexes!, 11 terminating:i!"
    ),
    "CronJobSpec": (
        "1 schedule!, 2 startingDeadlineSeconds:i!, 3 concurrencyPolicy, 4 suspend:bool!, "
        "5 jobTemplate:JobTemplateSpec, 6 successfulJobsHistoryLimit:i!, 7 failedJobsHistoryLimit:i!, "
        "8 timeZone!"
    ),
    "CronJobStatus": "1 active:[ObjectReference], 4 lastScheduleTime:Time, 5 lastSuccessfulTime:Time",
    "PodDisruptionBudgetSpec": (
        "1 minAvailable:IntOrString!, 2 selector:LabelSelector, "
        "3 maxUnavailable:IntOrString!, 4 unhealthyPodEvictionPolicy!"
    ),
    "PodDisruptionBudgetStatus": (
        "1 observedGeneration:i, 2 disruptedPods:{Time}, 3 disruptionsAllowed:i!, "
        "4 currentHealthy:i!, 5 desiredHealthy:i!, 6 expectedPods:i!, "
        "7 conditions:[Condition]"
    ),
    "LeaseSpec": (
        "1 holderIdentity!, 2 leaseDurationSeconds:i!, 3 acquireTime:MicroTime, 4 renewTime:MicroTime, "
        "5 leaseTransitions:i!, 6 strategy!, 7 preferredHolder!"
    ),
    "events.EventSeries": "1 count:i!, 2 lastObservedTime:MicroTime",
    "ScaleSpec": "1 replicas:i",
    "ScaleStatus": "1 replicas:i!, 2 selector",
    "Preconditions": "1 uid!, 2 resourceVersion!",
    "OwnerReference": "1 kind!, 3 name!, 4 uid!, 5 apiVersion!, 6 controller:bool!, 7 blockOwnerDeletion:bool!",
    "ManagedFieldsEntry": (
        "1 manager, 2 operation, 3 apiVersion, 4 time:Time, 6 fieldsType, 7 fieldsV1:Raw, 8 subresource"
    ),
    "NamespaceCondition": "1 type!, 2 status!, 4 lastTransitionTime:Time, 5 reason, 6 message",
    "ServicePort": "1 name, 2 protocol, 3 port:i!, 4 targetPort:IntOrString, 5 nodePort:i, 6 appProtocol!",
    "SessionAffinityConfig": "1 clientIP:ClientIPConfig",
    "LoadBalancerStatus": "1 ingress:[LoadBalancerIngress]",
    "Condition": "1 type!, 2 status!, 3 observedGeneration:i, 4 lastTransitionTime:Time, 5 reason!, 6 message!",
    "Volume": "1 name!, 2 ...:VolumeSource",
    "Container": (
        "1 name!, 2 image, 3 command:[s], 4 args:[s], 5 workingDir, 6 ports:[ContainerPort], "
        "7 env:[EnvVar], 8 resources:ResourceRequirements, 9 volumeMounts:[VolumeMount], "
        "10 livenessProbe:Probe, 11 readinessProbe:Probe, 12 lifecycle:Lifecycle, "
        "13 terminationMessagePath, 14 imagePullPolicy, 15 securityContext:SecurityContext, "
        "16 stdin:bool, 17 stdinOnce:bool, 18 tty:bool, 19 envFrom:[EnvFromSource], "
        "20 terminationMessagePolicy, 21 volumeDevices:[VolumeDevice], 22 startupProbe:Probe, "
        "23 resizePolicy:[ContainerResizePolicy], 24 restartPolicy!"
    ),
    "PodSecurityContext": (
        "1 seLinuxOptions:SELinuxOptions, 2 runAsUser:i!, 3 runAsNonRoot:bool!, "
        "4 supplementalGroups:[i], 5 fsGroup:i!, 6 runAsGroup:i!, 7 sysctls:[Sysctl], "
        "9 fsGroupChangePolicy!, 10 seccompProfile:SeccompProfile, "
        "11 appArmorProfile:AppArmorProfile, 12 supplementalGroupsPolicy!, "
        "13 seLinuxChangePolicy!"
    ),
    "Affinity": "1 nodeAffinity:NodeAffinity, 2 podAffinity:PodAffinity, 3 podAntiAffinity:PodAntiAffinity",
    "Toleration": "1 key, 2 operator, 3 value, 4 effect, 5 tolerationSeconds:i!",
    "HostAlias": "1 ip!, 2 hostnames:[s]",
    "PodDNSConfig": "1 nameservers:[s], 2 searches:[s], 3 options:[PodDNSConfigOption]",
    "PodReadinessGate": "1 conditionType!",
    "TopologySpreadConstraint": (
        "1 maxSkew:i!, 2 topologyKey!, 3 whenUnsatisfiable!, "
        "4 labelSelector:LabelSelector, 5 minDomains:i!, 6 nodeAffinityPolicy!, "
        "7 nodeTaintsPolicy!, 8 matchLabelKeys:[s]"
    ),
    "PodOS": "1 name!",
    "PodSchedulingGate": "1 name!",
    "PodResourceClaim": "1 name!, 3 resourceClaimName!, 4 resourceClaimTemplateName!",
    "ResourceRequirements": "1 limits:{Quantity}, 2 requests:{Quantity}, 3 claims:[ResourceClaim]",
    "PodCondition": (
        "1 type!, 2 status!, 3 lastProbeTime:Time, 4 lastTransitionTime:Time, 5 reason, 6 message, "
        "7 observedGeneration:i"
    ),
    "ContainerStatus": (
        "1 name!, 2 state:ContainerState, 3 lastState:ContainerState, 4 ready:bool!, "
        "5 restartCount:i!, 6 image!, 7 imageID!, 8 containerID, 9 started:bool!, "
        "10 allocatedResources:{Quantity}, 11 resources:ResourceRequirements, 15 stopSignal!"
    ),
    "PodIP": "1 ip!",
    "HostIP": "1 ip!",
    "LabelSelector": "1 matchLabels:{s}, 2 matchExpressions:[LabelSelectorRequirement]",
    "PodTemplateSpec": "1 metadata:ObjectMeta, 2 spec:PodSpec",
    "DeploymentStrategy": "1 type, 2 rollingUpdate:RollingUpdateDeployment",
    "DeploymentCondition": (
        "1 type!, 2 status!, 4 reason, 5 message, 6 lastUpdateTime:Time, 7 lastTransitionTime:Time"
    ),
    "ReplicaSetCondition": "1 type!, 2 status!, 3 lastTransitionTime:Time, 4 reason, 5 message",
    "DaemonSetUpdateStrategy": "1 type, 2 rollingUpdate:RollingUpdateDaemonSet",
    "DaemonSetCondition": "1 type!, 2 status!, 3 lastTransitionTime:Time, 4 reason, 5 message",
    "PersistentVolumeClaim": "1 metadata:ObjectMeta, 2 spec:PersistentVolumeClaimSpec",
    "StatefulSetUpdateStrategy": "1 type, 2 rollingUpdate:RollingUpdateStatefulSetStrategy",
    "StatefulSetPersistentVolumeClaimRetentionPolicy": "1 whenDeleted, 2 whenScaled",
    "StatefulSetOrdinals": "1 start:i!",
    "StatefulSetCondition": "1 type!, 2 status!, 3 lastTransitionTime:Time, 4 reason, 5 message",
    "PodFailurePolicy": "1 rules:[PodFailurePolicyRule]",
    "SuccessPolicy": "1 rules:[SuccessPolicyRule]",
    "JobCondition": "1 type!, 2 status!, 3 lastProbeTime:Time, 4 lastTransitionTime:Time, 5 reason, 6 message",
    "UncountedTerminatedPods": "1 succeeded:[s], 2 failed:[s]",
    "JobTemplateSpec": "1 metadata:ObjectMeta, 2 spec:JobSpec",
    "ClientIPConfig": "1 timeoutSeconds:i!",
    "LoadBalancerIngress": "1 ip, 2 hostname, 3 ipMode!, 4 ports:[PortStatus]",
    "VolumeSource": (
        "1 hostPath:HostPathVolumeSource, 2 emptyDir:EmptyDirVolumeSource, "
        "6 secret:SecretVolumeSource, 7 nfs:NFSVolumeSource, "
        "10 persistentVolumeClaim:PersistentVolumeClaimVolumeSource, "
        "16 downwardAPI:DownwardAPIVolumeSource, 19 configMap:ConfigMapVolumeSource, "
        "26 projected:ProjectedVolumeSource, 28 csi:CSIVolumeSource, "
        "29 ephemeral:EphemeralVolumeSource, 30 image:ImageVolumeSource"
    ),
    "ContainerPort": "1 name, 2 hostPort:i, 3 containerPort:i!, 4 protocol, 5 hostIP",
    "EnvVar": "1 name!, 2 value, 3 valueFrom:EnvVarSource",
    "VolumeMount": (
        "1 name!, 2 readOnly:bool, 3 mountPath!, 4 subPath, 5 mountPropagation!, 6 subPathExpr, "
        "7 recursiveReadOnly!, 8 bindMountOptions:[s]"
    ),
    "Probe": (
        "1 ...:ProbeHandler, 2 initialDelaySeconds:i, 3 timeoutSeconds:i, 4 periodSeconds:i, "
        "5 successThreshold:i, 6 failureThreshold:i, 7 terminationGracePeriodSeconds:i!"
    ),
    "Lifecycle": "1 postStart:LifecycleHandler, 2 preStop:LifecycleHandler, 3 stopSignal!",
    "SecurityContext": (
        "1 capabilities:Capabilities, 2 privileged:bool!, 3 seLinuxOptions:SELinuxOptions, "
        "4 runAsUser:i!, 5 runAsNonRoot:bool!, 6 readOnlyRootFilesystem:bool!, "
        "7 allowPrivilegeEscalation:bool!, 8 runAsGroup:i!, 9 procMount!, "
        "11 seccompProfile:SeccompProfile, 12 appArmorProfile:AppArmorProfile"
    ),
    "EnvFromSource": "1 prefix, 2 configMapRef:ConfigMapEnvSource, 3 secretRef:SecretEnvSource",
    "VolumeDevice": "1 name!, 2 devicePath!",
    "ContainerResizePolicy": "1 resourceName!, 2 restartPolicy!",
    "SELinuxOptions": "1 user, 2 role, 3 type, 4 level",
    "Sysctl": "1 name!, 2 value!",
    "SeccompProfile": "1 type!, 2 localhostProfile!",
    "AppArmorProfile": "1 type!, 2 localhostProfile!",
    "NodeAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution:NodeSelector, "
        "2 preferredDuringSchedulingIgnoredDuringExecution:[PreferredSchedulingTerm]"
    ),
    "PodAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution:[PodAffinityTerm], "
        "2 preferredDuringSchedulingIgnoredDuringExecution:[WeightedPodAffinityTerm]"
    ),
    "PodAntiAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution:[PodAffinityTerm], "
        "2 preferredDuringSchedulingIgnoredDuringExecution:[WeightedPodAffinityTerm]"
    ),
    "PodDNSConfigOption": "1 name, 2 value!",
    "ResourceClaim": "1 name!, 2 request",
    "ContainerState": (
        "1 waiting:ContainerStateWaiting, 2 running:ContainerStateRunning, 3 terminated:ContainerStateTerminated"
    ),
    "LabelSelectorRequirement": "1 key!, 2 operator!, 3 values:[s]",
    "RollingUpdateDeployment": "1 maxUnavailable:IntOrString!, 2 maxSurge:IntOrString!",
    "RollingUpdateDaemonSet": "1 maxUnavailable:IntOrString!, 2 maxSurge:IntOrString!",
    "PersistentVolumeClaimSpec": (
        "1 accessModes:[s], 2 resources:VolumeResourceRequirements, 3 volumeName, "
        "4 selector:LabelSelector, 5 storageClassName!, 6 volumeMode!, "
        "7 dataSource:TypedLocalObjectReference, 8 dataSourceRef:TypedObjectReference, "
        "9 volumeAttributesClassName!"
    ),
    "RollingUpdateStatefulSetStrategy": "1 partition:i!, 2 maxUnavailable:IntOrString!",
    "PodFailurePolicyRule": (
        "1 action!, 2 onExitCodes:PodFailurePolicyOnExitCodesRequirement, "
        "3 onPodConditions:[PodFailurePolicyOnPodConditionsPattern]"
    ),
    "SuccessPolicyRule": "1 succeededIndexes!, 2 succeededCount:i!",
    "PortStatus": "1 port:i!, 2 protocol!, 3 error!",
    "HostPathVolumeSource": "1 path!, 2 type!",
    "EmptyDirVolumeSource": "1 medium, 2 sizeLimit:Quantity!, 3 mode:i!",
    "SecretVolumeSource": ("1 secretName, 2 items:[KeyToPath], 3 defaultMode:i!, 4 optional:bool!, 5 defaultUser:i!"),
    "NFSVolumeSource": "1 server!, 2 path!, 3 readOnly:bool",
    "PersistentVolumeClaimVolumeSource": "1 claimName!, 2 readOnly:bool",
    "DownwardAPIVolumeSource": "1 items:[DownwardAPIVolumeFile], 2 defaultMode:i!, 3 defaultUser:i!",
    "ConfigMapVolumeSource": (
        "1 ...:LocalObjectReference, 2 items:[KeyToPath], 3 defaultMode:i!, 4 optional:bool!, 5 defaultUser:i!"
    ),
    "ProjectedVolumeSource": "1 sources:[VolumeProjection], 2 defaultMode:i!, 3 defaultUser:i!",
    "CSIVolumeSource": (
        "1 driver!, 2 readOnly:bool!, 3 fsType!, 4 volumeAttributes:{s}, 5 nodePublishSecretRef:LocalObjectReference"
    ),
    "EphemeralVolumeSource": "1 volumeClaimTemplate:PersistentVolumeClaimTemplate",
    "ImageVolumeSource": "1 reference, 2 pullPolicy",
    "EnvVarSource": (
        "1 fieldRef:ObjectFieldSelector, 2 resourceFieldRef:ResourceFieldSelector, "
        "3 configMapKeyRef:ConfigMapKeySelector, 4 secretKeyRef:SecretKeySelector, "
        "5 fileKeyRef:FileKeySelector"
    ),
    "ProbeHandler": "1 exec:ExecAction, 2 httpGet:HTTPGetAction, 3 tcpSocket:TCPSocketAction, 4 grpc:GRPCAction",
    "LifecycleHandler": (
        "1 exec:ExecAction, 2 httpGet:HTTPGetAction, 3 tcpSocket:TCPSocketAction, 4 sleep:SleepAction"
    ),
    "Capabilities": "1 add:[s], 2 drop:[s]",
    "ConfigMapEnvSource": "1 ...:LocalObjectReference, 2 optional:bool!",
    "SecretEnvSource": "1 ...:LocalObjectReference, 2 optional:bool!",
    "NodeSelector": "1 nodeSelectorTerms:[NodeSelectorTerm]",
    "PreferredSchedulingTerm": "1 weight:i!, 2 preference:NodeSelectorTerm",
    "PodAffinityTerm": (
        "1 labelSelector:LabelSelector, 2 namespaces:[s], 3 topologyKey!, "
        "4 namespaceSelector:LabelSelector, 5 matchLabelKeys:[s], 6 mismatchLabelKeys:[s]"
    ),
    "WeightedPodAffinityTerm": "1 weight:i!, 2 podAffinityTerm:PodAffinityTerm",
    "ContainerStateWaiting": "1 reason, 2 message",
    "ContainerStateRunning": "1 startedAt:Time",
    "ContainerStateTerminated": (
        "1 exitCode:i!, 2 signal:i, 3 reason, 4 message, 5 startedAt:Time, 6 finishedAt:Time, 7 containerID"
    ),
    "VolumeResourceRequirements": "1 limits:{Quantity}, 2 requests:{Quantity}",
    "TypedLocalObjectReference": "1 apiGroup!, 2 kind!, 3 name!",
    "TypedObjectReference": "1 apiGroup!, 2 kind!, 3 name!, 4 namespace!",
    "PodFailurePolicyOnExitCodesRequirement": "1 containerName!, 2 operator!, 3 values:[i]",
    "PodFailurePolicyOnPodConditionsPattern": "1 type!, 2 status!",
    "KeyToPath": "1 key!, 2 path!, 3 mode:i!, 4 user:i!",
    "DownwardAPIVolumeFile": (
        "1 path!, 2 fieldRef:ObjectFieldSelector, 3 resourceFieldRef:ResourceFieldSelector, 4 mode:i!, 5 user:i!"
    ),
    "VolumeProjection": (
        "1 secret:SecretProjection, 2 downwardAPI:DownwardAPIProjection, "
        "3 configMap:ConfigMapProjection, 4 serviceAccountToken:ServiceAccountTokenProjection"
    ),
    "PersistentVolumeClaimTemplate": "1 metadata:ObjectMeta, 2 spec:PersistentVolumeClaimSpec",
    "ObjectFieldSelector": "1 apiVersion, 2 fieldPath!",
    "ResourceFieldSelector": "1 containerName, 2 resource!, 3 divisor:Quantity",
    "ConfigMapKeySelector": "1 ...:LocalObjectReference, 2 key!, 3 optional:bool!",
    "SecretKeySelector": "1 ...:LocalObjectReference, 2 key!, 3 optional:bool!",
    "FileKeySelector": "1 volumeName!, 2 path!, 3 key!, 4 optional:bool!",
    "ExecAction": "1 command:[s]",
    "HTTPGetAction": "1 path, 2 port:IntOrString!, 3 host, 4 scheme, 5 httpHeaders:[HTTPHeader], 6 protocol!",
    "TCPSocketAction": "1 port:IntOrString!, 2 host",
    "GRPCAction": "1 port:i!, 2 service!, 3 mode!",
    "SleepAction": "1 seconds:i!",
    "NodeSelectorTerm": "1 matchExpressions:[NodeSelectorRequirement], 2 matchFields:[NodeSelectorRequirement]",
    "SecretProjection": "1 ...:LocalObjectReference, 2 items:[KeyToPath], 4 optional:bool!",
    "DownwardAPIProjection": "1 items:[DownwardAPIVolumeFile]",
    "ConfigMapProjection": "1 ...:LocalObjectReference, 2 items:[KeyToPath], 4 optional:bool!",
    "ServiceAccountTokenProjection": "1 audience, 2 expirationSeconds:i!, 3 path!, 4 user:i!",
    "HTTPHeader": "1 name!, 2 value!",
    "NodeSelectorRequirement": "1 key!, 2 operator!, 3 values:[s]",
}

# What a request body may be: (apiVersion, kind) from the envelope -> message.
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "Service"): "Service",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("v1", "Pod"): "Pod",
    ("v1", "Binding"): "Binding",
    ("v1", "Event"): "Event",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("apps/v1", "Deployment"): "Deployment",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "DaemonSet"): "DaemonSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HorizontalPodAutoscaler",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("policy/v1", "Eviction"): "Eviction",
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    ("events.k8s.io/v1", "Event"): "events.Event",
    ("autoscaling/v1", "Scale"): "Scale",
}

# DeleteOptions is registered in every group version (a DELETE body carries the resource's own
# group version, or meta.k8s.io/v1), so its kind alone is enough.
ANY_VERSION_KINDS: dict[str, str] = {"DeleteOptions": "DeleteOptions"}
