# Shell helpers of the chart's tests (sourced, not run): those of tests/lib.sh, and yaml2json.

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# ---------------------------------------------------------------- YAML

# yaml2json HELM FILE...: each YAML document of the files as one line of JSON (empty and
# comment-only documents dropped). Helm's own YAML parser does it (fromYaml in a throwaway
# chart), so no YAML tool beyond helm is needed.
yaml2json() {
    local helm=$1; shift
    local chart f i=0
    chart=$(mktemp -d "${TMPDIR:-/tmp}/yaml2json.XXXXXX")
    mkdir -p "$chart/templates" "$chart/in"
    printf 'apiVersion: v2\nname: yaml2json\nversion: 0.0.0\n' > "$chart/Chart.yaml"
    cat > "$chart/templates/out.yaml" <<'TPL'
{{- range $path, $_ := .Files.Glob "in/*" }}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" ($.Files.Get $path) -1 }}
{{- $o := fromYaml $doc }}
{{- if hasKey $o "Error" }}{{ fail (printf "%s: %s" $path $o.Error) }}{{ end }}
{{- if $o }}
---
{{ toJson $o }}
{{- end }}
{{- end }}
{{- end }}
TPL
    for f in "$@"; do
        cp "$f" "$chart/in/$(printf '%03d' $i)-$(basename "$f")"
        i=$((i + 1))
    done
    "$helm" template yaml2json "$chart" | grep '^{'
    local rc=${PIPESTATUS[0]}
    rm -rf "$chart"
    return "$rc"
}
