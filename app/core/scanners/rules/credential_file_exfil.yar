rule credential_file_exfil
{
    meta:
        id = "credential-file-exfil"
        description = "Reads a credential file (cloud keys, SSH keys, Hugging Face token, env) and sends data out"
        severity = "high"
    strings:
        $aws = ".aws/credentials"
        $ssh = /\.ssh[\/\\]+id_(rsa|ed25519|ecdsa|dsa)\b/
        $hf_cache = /\.cache[\/\\]+huggingface[\/\\]+(stored_)?tokens?\b/
        $hf_legacy = /\.huggingface[\/\\]+token\b/
        $gcloud = "application_default_credentials.json"
        $kube = ".kube/config"
        $netrc = /[\/~]\.netrc\b/
        $docker = ".docker/config.json"
        $git = ".git-credentials"
        $environ = /(os\.environ\.copy\s*\(\s*\)|dict\s*\(\s*os\.environ\s*\)|json\.dumps\s*\(\s*dict\s*\(\s*os\.environ)/
        $send_requests = /requests\.post\s*\(/
        $send_httpx = /httpx\.post\s*\(/
        $send_urllib = /urllib\.request\.(urlopen|Request)\s*\([^\n]{0,200}data\s*=/
        $send_curl = /curl\s[^\n]{0,200}\s(-d|--data(-binary|-raw)?|-F|--form|-T|--upload-file)\s/
        $send_ps = /Invoke-(WebRequest|RestMethod)[^\n]{0,200}-Method\s+Post/ nocase
        $send_hook = /(discord(app)?\.com\/api\/webhooks|api\.telegram\.org\/bot)/
    condition:
        any of ($aws, $ssh, $hf_cache, $hf_legacy, $gcloud, $kube, $netrc, $docker, $git, $environ) and
        any of ($send_*)
}
