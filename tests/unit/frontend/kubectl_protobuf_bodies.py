"""Request bodies real kubectl 1.33.1 sent to ``kubemu serve`` in protobuf, pinned as hex.

Captured once through a logging proxy in front of ``kubemu serve`` (every command succeeded against
it); next to each, the JSON the same command prints with ``--dry-run=client -o json`` (less the zero
``creationTimestamp: null``), which is what the same kubectl sends when told to use JSON. Read by
``test_protobuf_all_kinds.py``.
"""

# fmt: off
KUBECTL_133_BODIES: list[tuple[str, str, str]] = [
    (
        "kubectl create namespace pb-a",
        (
            "6b3873000a0f0a02763112094e616d657370616365121c0a140a0470622d6112001a0022002a0032003800420012001a020a"
            "001a002200"
        ),
        (
            "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"pb-a\"},\"spec\":{},\"status\":{}}"
        ),
    ),
    (
        "kubectl create configmap cm1 --from-literal=a=1 --from-literal=empty=",
        (
            "6b3873000a0f0a0276311209436f6e6669674d617012280a130a03636d3112001a0022002a0032003800420012060a016112"
            "013112090a05656d70747912001a002200"
        ),
        (
            "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"cm1\"},\"data\":{\"a\":\"1\",\"empty\":\"\"}}"
        ),
    ),
    (
        "kubectl create secret generic s1 --from-literal=pw=s3cr3t",
        (
            "6b3873000a0c0a027631120653656372657412240a120a02733112001a0022002a00320038004200120c0a02707712067333"
            "637233741a001a002200"
        ),
        (
            "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s1\"},\"data\":{\"pw\":\"czNjcjN0\"}}"
        ),
    ),
    (
        "kubectl create deployment web --image=nginx:1.27 --replicas=3 --port=80",
        (
            "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412bd010a1f0a0377656212001a0022002a003200380042"
            "005a0a0a036170701203776562128b010803120c0a0a0a0361707012037765621a710a1c0a0012001a0022002a0032003800"
            "42005a0a0a036170701203776562125112330a056e67696e78120a6e67696e783a312e32372a00320a0a001000185022002a"
            "0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a"
            "00280038001a0c0800100018002000280038001a002200"
        ),
        (
            "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"web\",\"labels\":{\"app\":\"web\"}},\"spec\":"
            "{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\""
            "}},\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx:1.27\",\"ports\":[{\"containerPort\":80}],\"resour"
            "ces\":{}}]}},\"strategy\":{}},\"status\":{}}"
        ),
    ),
    (
        "kubectl create job j1 --image=busybox -- echo hi",
        (
            "6b3873000a0f0a0862617463682f763112034a6f621284010a120a026a3112001a0022002a00320038004200126432620a10"
            "0a0012001a0022002a00320038004200124e122b0a026a31120762757379626f781a046563686f1a0268692a0042006a0072"
            "00800100880100900100a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a082000"
            "280030003a001a002200"
        ),
        (
            "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"name\":\"j1\"},\"spec\":{\"template\":{\"metadata\":{},\"sp"
            "ec\":{\"containers\":[{\"name\":\"j1\",\"image\":\"busybox\",\"command\":[\"echo\",\"hi\"],\"resources\":{}}],\"restartP"
            "olicy\":\"Never\"}}},\"status\":{}}"
        ),
    ),
    (
        "kubectl create cronjob cj1 --image=busybox --schedule='*/5 * * * *' -- date",
        (
            "6b3873000a130a0862617463682f7631120743726f6e4a6f6212a7010a130a03636a3112001a0022002a0032003800420012"
            "8d010a0b2a2f35202a202a202a202a1a002a7c0a130a03636a3112001a0022002a00320038004200126532630a100a001200"
            "1a0022002a00320038004200124f12280a03636a31120762757379626f781a04646174652a0042006a007200800100880100"
            "900100a201001a094f6e4661696c757265320042004a0052005800600068008201008a01009a0100c201001a001a002200"
        ),
        (
            "{\"kind\":\"CronJob\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"name\":\"cj1\"},\"spec\":{\"schedule\":\"*/5 * * * *\""
            ",\"jobTemplate\":{\"metadata\":{\"name\":\"cj1\"},\"spec\":{\"template\":{\"metadata\":{},\"spec\":{\"containers\":[{\""
            "name\":\"cj1\",\"image\":\"busybox\",\"command\":[\"date\"],\"resources\":{}}],\"restartPolicy\":\"OnFailure\"}}}}},\""
            "status\":{}}"
        ),
    ),
    (
        "kubectl create priorityclass p1 --value=100",
        (
            "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c61737312300a120a0270"
            "3112001a0022002a003200380042001064180022002a14507265656d70744c6f7765725072696f726974791a002200"
        ),
        (
            "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":\"p1\"},\"value\":100,\"pr"
            "eemptionPolicy\":\"PreemptLowerPriority\"}"
        ),
    ),
    (
        "kubectl create pdb pdb1 --selector=app=web --min-available=1",
        (
            "6b3873000a200a09706f6c6963792f76311213506f6444697372757074696f6e427564676574123a0a140a04706462311200"
            "1a0022002a0032003800420012160a06080010011a00120c0a0a0a0361707012037765621a0a080018002000280030001a00"
            "2200"
        ),
        (
            "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":\"pdb1\"},\"spec\":{\"minAvaila"
            "ble\":1,\"selector\":{\"matchLabels\":{\"app\":\"web\"}}},\"status\":{\"disruptionsAllowed\":0,\"currentHealthy\":0"
            ",\"desiredHealthy\":0,\"expectedPods\":0}}"
        ),
    ),
    (
        "kubectl create service clusterip svc1 --tcp=80:8080",
        (
            "6b3873000a0d0a027631120753657276696365126c0a210a047376633112001a0022002a003200380042005a0b0a03617070"
            "12047376633112430a1b0a0738302d38303830120354435018502207080010903f1a002800120b0a03617070120473766331"
            "1a002209436c757374657249503a00420052005a00600068001a020a001a002200"
        ),
        (
            "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"svc1\",\"labels\":{\"app\":\"svc1\"}},\"spec\":{\"port"
            "s\":[{\"name\":\"80-8080\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":8080}],\"selector\":{\"app\":\"svc1\"},\"type"
            "\":\"ClusterIP\"},\"status\":{\"loadBalancer\":{}}}"
        ),
    ),
    (
        "kubectl create serviceaccount sa1",
        (
            "6b3873000a140a027631120e536572766963654163636f756e7412150a130a0373613112001a0022002a003200380042001a"
            "002200"
        ),
        (
            "{\"kind\":\"ServiceAccount\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"sa1\"}}"
        ),
    ),
    (
        "kubectl create rolebinding rb1 --clusterrole=view --user=alice --serviceaccount=default:sa1",
        (
            "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e6712"
            "93010a130a0372623112001a0022002a00320038004200122a0a04557365721219726261632e617574686f72697a6174696f"
            "6e2e6b38732e696f1a05616c696365220012200a0e536572766963654163636f756e7412001a03736131220764656661756c"
            "741a2e0a19726261632e617574686f72697a6174696f6e2e6b38732e696f120b436c7573746572526f6c651a04766965771a"
            "002200"
        ),
        (
            "{\"kind\":\"RoleBinding\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"metadata\":{\"name\":\"rb1\"},\"subject"
            "s\":[{\"kind\":\"User\",\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"alice\"},{\"kind\":\"ServiceAccount\",\""
            "name\":\"sa1\",\"namespace\":\"default\"}],\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Cluste"
            "rRole\",\"name\":\"view\"}}"
        ),
    ),
    (
        "kubectl create quota q1 --hard=cpu=2,memory=4Gi,pods=10",
        (
            "6b3873000a130a027631120d5265736f7572636551756f746112430a120a02713112001a0022002a00320038004200122b0a"
            "0a0a0363707512030a01320a0f0a066d656d6f727912050a033447690a0c0a04706f647312040a0231301a001a002200"
        ),
        (
            "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"q1\"},\"spec\":{\"hard\":{\"cpu\":\"2\",\"memory"
            "\":\"4Gi\",\"pods\":\"10\"}},\"status\":{}}"
        ),
    ),
    (
        "kubectl create role r1 --verb=get,list --resource=pods",
        (
            "6b3873000a240a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311204526f6c6512290a120a027231"
            "12001a0022002a0032003800420012130a036765740a046c69737412001a04706f64731a002200"
        ),
        (
            "{\"kind\":\"Role\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"metadata\":{\"name\":\"r1\"},\"rules\":[{\"verbs"
            "\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]}"
        ),
    ),
    (
        "kubectl create clusterrole cr1 --verb=get --resource=nodes",
        (
            "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c6512"
            "250a130a0363723112001a0022002a00320038004200120e0a0367657412001a056e6f6465731a002200"
        ),
        (
            "{\"kind\":\"ClusterRole\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"metadata\":{\"name\":\"cr1\"},\"rules\":"
            "[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"nodes\"]}]}"
        ),
    ),
    (
        "kubectl create clusterrolebinding crb1 --clusterrole=cr1 --group=devs",
        (
            "6b3873000a320a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311212436c7573746572526f6c6542"
            "696e64696e6712710a140a046372623112001a0022002a00320038004200122a0a0547726f75701219726261632e61757468"
            "6f72697a6174696f6e2e6b38732e696f1a046465767322001a2d0a19726261632e617574686f72697a6174696f6e2e6b3873"
            "2e696f120b436c7573746572526f6c651a036372311a002200"
        ),
        (
            "{\"kind\":\"ClusterRoleBinding\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"metadata\":{\"name\":\"crb1\"},"
            "\"subjects\":[{\"kind\":\"Group\",\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"devs\"}],\"roleRef\":{\"apiGr"
            "oup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"cr1\"}}"
        ),
    ),
    (
        "kubectl create ingress ing1 --rule=foo.com/bar=svc1:80",
        (
            "6b3873000a1f0a146e6574776f726b696e672e6b38732e696f2f76311207496e6772657373124a0a140a04696e673112001a"
            "0022002a00320038004200122e1a2c0a07666f6f2e636f6d12210a1f0a1d0a042f626172120e220c0a047376633112040a00"
            "10501a0545786163741a020a001a002200"
        ),
        (
            "{\"kind\":\"Ingress\",\"apiVersion\":\"networking.k8s.io/v1\",\"metadata\":{\"name\":\"ing1\"},\"spec\":{\"rules\":[{\""
            "host\":\"foo.com\",\"http\":{\"paths\":[{\"path\":\"/bar\",\"pathType\":\"Exact\",\"backend\":{\"service\":{\"name\":\"svc"
            "1\",\"port\":{\"number\":80}}}}]}}]},\"status\":{\"loadBalancer\":{}}}"
        ),
    ),
    (
        "kubectl create poddisruptionbudget pdb2 --selector=app=web --max-unavailable=50%",
        (
            "6b3873000a200a09706f6c6963792f76311213506f6444697372757074696f6e427564676574123d0a140a04706462321200"
            "1a0022002a003200380042001219120c0a0a0a0361707012037765621a09080110001a033530251a0a080018002000280030"
            "001a002200"
        ),
        (
            "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":\"pdb2\"},\"spec\":{\"selector\""
            ":{\"matchLabels\":{\"app\":\"web\"}},\"maxUnavailable\":\"50%\"},\"status\":{\"disruptionsAllowed\":0,\"currentHeal"
            "thy\":0,\"desiredHealthy\":0,\"expectedPods\":0}}"
        ),
    ),
    (
        "kubectl autoscale deployment web --min=2 --max=5 --cpu-percent=80",
        (
            "6b3873000a290a0e6175746f7363616c696e672f76321217486f72697a6f6e74616c506f644175746f7363616c657212610a"
            "130a0377656212001a0022002a0032003800420012440a1a0a0a4465706c6f796d656e7412037765621a07617070732f7631"
            "1002180522220a085265736f7572636522160a03637075120f0a0b5574696c697a6174696f6e20501a04180020001a002200"
        ),
        (
            "{\"kind\":\"HorizontalPodAutoscaler\",\"apiVersion\":\"autoscaling/v2\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"s"
            "caleTargetRef\":{\"kind\":\"Deployment\",\"name\":\"web\",\"apiVersion\":\"apps/v1\"},\"minReplicas\":2,\"maxReplica"
            "s\":5,\"metrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"target\":{\"type\":\"Utilization\",\"averageU"
            "tilization\":80}}}]},\"status\":{\"desiredReplicas\":0,\"currentMetrics\":null}}"
        ),
    ),
]
# fmt: on
