# Sourced by the benches: `generate DIR N` writes a monorepo of N apps x 3
# environments (dev, staging, production) with hydrate environment files:
# ../shared/bench/gen (seed 1) when it exists, converted by
# benches/bench_envs.py; otherwise the small built-in generator below
# (kustomize apps only). Needs $here (the repository root).
gen=$here/../shared/bench/gen

# builtin_gen DIR N: N apps, each a base (Deployment, Service, ConfigMap
# generator) and an overlay per environment (namespace, prefix, labels,
# images, a strategic-merge patch).
builtin_gen() {
  local dir=$1 n=$2 i e
  mkdir -p "$dir/environments"
  for e in dev staging production; do
    printf 'name: %s\noutput: {dir: rendered/%s}\napps:\n' "$e" "$e" >"$dir/environments/$e.yaml"
  done
  for i in $(seq 1 "$n"); do
    local a=app$i b=$dir/apps/app$i/base
    mkdir -p "$b/config"
    printf 'resources: [deployment.yaml, service.yaml]\nconfigMapGenerator:\n  - name: %s\n    files: [config/app.properties]\n' "$a" >"$b/kustomization.yaml"
    printf 'port=%s\nname=%s\n' "$((8000 + i))" "$a" >"$b/config/app.properties"
    printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  selector:\n    matchLabels: {app: %s}\n  template:\n    metadata:\n      labels: {app: %s}\n    spec:\n      containers:\n        - name: %s\n          image: registry.example.com/%s:1.0.0\n          envFrom: [{configMapRef: {name: %s}}]\n' "$a" "$a" "$a" "$a" "$a" "$a" >"$b/deployment.yaml"
    printf 'apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\nspec:\n  selector: {app: %s}\n  ports: [{port: 80, targetPort: 8080}]\n' "$a" "$a" >"$b/service.yaml"
    for e in dev staging production; do
      local o=$dir/apps/$a/overlays/$e
      mkdir -p "$o"
      printf 'resources: [../../base]\nnamespace: %s-%s\nnamePrefix: %s-\nlabels: [{pairs: {env: %s}, includeSelectors: true}]\nimages: [{name: registry.example.com/%s, newTag: "1.%s.0"}]\npatches: [{path: replicas.yaml}]\n' "$a" "$e" "$e" "$e" "$a" "$i" >"$o/kustomization.yaml"
      printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: %s\n' "$a" "$(( ${#e} % 4 + 1 ))" >"$o/replicas.yaml"
      printf '  - {name: %s, kustomize: apps/%s/overlays/%s}\n' "$a" "$a" "$e" >>"$dir/environments/$e.yaml"
    done
  done
}

generate() { # DIR N
  if [ -x "$gen" ]; then
    "$gen" "$1" --apps "$2" --envs dev,staging,production --seed 1 >/dev/null
    python3 "$here/benches/bench_envs.py" "$1"
  else
    builtin_gen "$1" "$2"
  fi
}

