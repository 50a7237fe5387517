// One object, not an array; read because the source recurses.
{
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: std.extVar('app') },
  spec: { selector: { app: std.extVar('app') }, ports: [{ port: p } for p in std.extVar('ports')] },
}
