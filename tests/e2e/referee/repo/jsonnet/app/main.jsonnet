// Top-level arguments (tlas) and external variables (extVars) come from the Application.
local k = import 'k.libsonnet';
local motd = importstr 'files/motd.txt';

function(replicas=1, tier='dev') [
  k.deployment(std.extVar('app'), replicas, std.extVar('ports')),
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: std.extVar('app') + '-' + tier },
    data: {
      motd: motd,
      'settings.yaml': std.manifestYamlDoc({ tier: tier, ports: std.extVar('ports') }),
      revision: std.extVar('revision'),
    },
  },
  null,
]
