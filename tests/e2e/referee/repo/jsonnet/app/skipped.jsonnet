// +argocd:skip-file-rendering
error 'never evaluated'
