package main

// podJSON is a pod as a production deployment makes it, the shape step 4
// measures: an init container and three containers (the application, a
// proxy sidecar, a log shipper) with arguments, ports, environment,
// resources, probes, volume mounts and security contexts; the projected
// service-account volume, spelled out so that a real cluster's admission
// adds nothing; labels and annotations as tools set them; and the status
// of a running pod, with its five conditions and four container
// statuses. It carries a scheduling gate, so that no scheduler or
// kubelet touches it. It is JSON, as kubectl get -o json shows a pod,
// in a Go file so that the chapter builds anywhere it is copied to; the
// memory benchmark (check/bench) reads the same constant.
const podJSON = `{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "shop",
    "labels": {
      "app.kubernetes.io/name": "shop",
      "app.kubernetes.io/instance": "shop-prod",
      "app.kubernetes.io/version": "2.14.1",
      "app.kubernetes.io/component": "api",
      "app.kubernetes.io/part-of": "storefront",
      "pod-template-hash": "7d9f8c6b5d"
    },
    "annotations": {
      "kubectl.kubernetes.io/default-container": "app",
      "prometheus.io/scrape": "true",
      "prometheus.io/port": "9090",
      "checksum/config": "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7"
    }
  },
  "spec": {
    "schedulingGates": [{"name": "walkthrough/hold"}],
    "serviceAccountName": "default",
    "automountServiceAccountToken": false,
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "enableServiceLinks": true,
    "securityContext": {"runAsNonRoot": true, "runAsUser": 10001, "fsGroup": 10001, "seccompProfile": {"type": "RuntimeDefault"}},
    "initContainers": [{
      "name": "migrate",
      "image": "registry.example.com/storefront/shop-migrate:2.14.1",
      "args": ["--database-url=$(DATABASE_URL)", "--timeout=120s"],
      "env": [
        {"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {"name": "shop-db", "key": "url"}}}
      ],
      "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
      "terminationMessagePath": "/dev/termination-log",
      "terminationMessagePolicy": "File",
      "imagePullPolicy": "IfNotPresent",
      "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}}
    }],
    "containers": [
      {
        "name": "app",
        "image": "registry.example.com/storefront/shop-api:2.14.1",
        "args": ["--config=/etc/shop/config.yaml", "--log-format=json"],
        "ports": [
          {"name": "http", "containerPort": 8080, "protocol": "TCP"},
          {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}
        ],
        "env": [
          {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
          {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
          {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
          {"name": "GOMAXPROCS", "valueFrom": {"resourceFieldRef": {"containerName": "app", "resource": "limits.cpu", "divisor": "1"}}},
          {"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {"name": "shop-db", "key": "url"}}},
          {"name": "REDIS_ADDR", "value": "redis.storefront.svc.cluster.local:6379"},
          {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel-collector.observability.svc:4317"},
          {"name": "OTEL_SERVICE_NAME", "value": "shop-api"},
          {"name": "LOG_LEVEL", "value": "info"},
          {"name": "FEATURE_FLAGS", "valueFrom": {"configMapKeyRef": {"name": "shop-config", "key": "feature-flags"}}}
        ],
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "volumeMounts": [
          {"name": "config", "mountPath": "/etc/shop", "readOnly": true},
          {"name": "tmp", "mountPath": "/tmp"},
          {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}
        ],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "initialDelaySeconds": 10, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3},
        "startupProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 2, "successThreshold": 1, "failureThreshold": 30},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}}
      },
      {
        "name": "proxy",
        "image": "registry.example.com/mesh/proxy:1.31.2",
        "args": ["proxy", "sidecar", "--domain=storefront.svc.cluster.local", "--concurrency=2"],
        "ports": [{"name": "http-envoy-prom", "containerPort": 15090, "protocol": "TCP"}],
        "env": [
          {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
          {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
          {"name": "INSTANCE_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
          {"name": "SERVICE_ACCOUNT", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.serviceAccountName"}}},
          {"name": "PROXY_CONFIG", "value": "{\"holdApplicationUntilProxyStarts\":true}"}
        ],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
        "volumeMounts": [
          {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}
        ],
        "readinessProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021, "scheme": "HTTP"}, "initialDelaySeconds": 1, "timeoutSeconds": 3, "periodSeconds": 2, "successThreshold": 1, "failureThreshold": 30},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}}
      },
      {
        "name": "log-shipper",
        "image": "registry.example.com/observability/fluent-bit:3.2.4",
        "args": ["--config=/fluent-bit/etc/fluent-bit.yaml"],
        "env": [
          {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
          {"name": "OUTPUT_HOST", "value": "logs.observability.svc.cluster.local"}
        ],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}},
        "volumeMounts": [
          {"name": "tmp", "mountPath": "/var/log/shop", "readOnly": true}
        ],
        "livenessProbe": {"httpGet": {"path": "/api/v1/health", "port": 2020, "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}}
      }
    ],
    "volumes": [
      {"name": "config", "configMap": {"name": "shop-config", "defaultMode": 420}},
      {"name": "tmp", "emptyDir": {}},
      {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
      ]}}
    ]
  },
  "status": {
    "phase": "Running",
    "conditions": [
      {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-05-04T09:12:31Z"},
      {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-05-04T09:12:38Z"},
      {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-05-04T09:12:52Z"},
      {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-05-04T09:12:52Z"},
      {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-05-04T09:12:29Z"}
    ],
    "startTime": "2026-05-04T09:12:29Z",
    "initContainerStatuses": [
      {"name": "migrate", "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-05-04T09:12:33Z", "finishedAt": "2026-05-04T09:12:37Z", "containerID": "containerd://9b0c3f6e1a2d4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e"}}, "lastState": {}, "ready": true, "restartCount": 0, "image": "registry.example.com/storefront/shop-migrate:2.14.1", "imageID": "registry.example.com/storefront/shop-migrate@sha256:5d41402abc4b2a76b9719d911017c592ae1c1f0c2b9a4f7e3d8c6b5a49382716", "containerID": "containerd://9b0c3f6e1a2d4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e", "started": false}
    ],
    "containerStatuses": [
      {"name": "app", "state": {"running": {"startedAt": "2026-05-04T09:12:39Z"}}, "lastState": {}, "ready": true, "restartCount": 0, "image": "registry.example.com/storefront/shop-api:2.14.1", "imageID": "registry.example.com/storefront/shop-api@sha256:7c211433f02071597741e6ff5a8ea34789abbf43a1b2c3d4e5f60718293a4b5c", "containerID": "containerd://1f2e3d4c5b6a79880716253443526170f1e2d3c4b5a69788796a5b4c3d2e1f0a", "started": true},
      {"name": "log-shipper", "state": {"running": {"startedAt": "2026-05-04T09:12:39Z"}}, "lastState": {}, "ready": true, "restartCount": 0, "image": "registry.example.com/observability/fluent-bit:3.2.4", "imageID": "registry.example.com/observability/fluent-bit@sha256:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9", "containerID": "containerd://2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819", "started": true},
      {"name": "proxy", "state": {"running": {"startedAt": "2026-05-04T09:12:38Z"}}, "lastState": {}, "ready": true, "restartCount": 0, "image": "registry.example.com/mesh/proxy:1.31.2", "imageID": "registry.example.com/mesh/proxy@sha256:8f14e45fceea167a5a36dedd4bea2543ab1c2d3e4f5061728394a5b6c7d8e9f0", "containerID": "containerd://3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2", "started": true}
    ]
  }
}
`
