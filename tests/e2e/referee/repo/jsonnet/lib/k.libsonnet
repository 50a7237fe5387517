// A small library, found through the Application's `directory.jsonnet.libs` (rooted at the
// repository, not at the source's directory).
{
  deployment(name, replicas, ports):: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: name, labels: { app: name } },
    spec: {
      replicas: replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{
            name: 'web',
            image: 'registry.example/web:1.0',
            ports: [{ containerPort: p } for p in ports],
          }],
        },
      },
    },
  },
}
