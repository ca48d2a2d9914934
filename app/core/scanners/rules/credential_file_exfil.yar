rule credential_file_exfil
{
    meta:
        id = "credential-file-exfil"
        description = "Reads a credential file (cloud keys, SSH keys, Hugging Face token, env) and sends data out"
        severity = "high"
    strings:
        $aws = ".aws/credentials" wide ascii
        $ssh = /\.ssh[\/\\]+id_(rsa|ed25519|ecdsa|dsa)\b/ wide ascii
        $hf_cache = /\.cache[\/\\]+huggingface[\/\\]+(stored_)?tokens?\b/ wide ascii
        $hf_legacy = /\.huggingface[\/\\]+token\b/ wide ascii
        $gcloud = "application_default_credentials.json" wide ascii
        $kube = ".kube/config" wide ascii
        $netrc = /[\/~]\.netrc\b/ wide ascii
        $docker = ".docker/config.json" wide ascii
        $git = ".git-credentials" wide ascii
        $environ = /(os\.environ\.copy\s*\(\s*\)|dict\s*\(\s*os\.environ\s*\)|json\.dumps\s*\(\s*dict\s*\(\s*os\.environ)/ wide ascii
        $send_requests = /requests\.post\s*\(/ wide ascii
        $send_httpx = /httpx\.post\s*\(/ wide ascii
        $send_urllib = /urllib\.request\.(urlopen|Request)\s*\([^\n]{0,200}data\s*=/ wide ascii
        $send_curl = /curl\s[^\n]{0,200}\s(-d|--data(-binary|-raw)?|-F|--form|-T|--upload-file)\s/ wide ascii
        $send_ps = /Invoke-(WebRequest|RestMethod)[^\n]{0,200}-Method\s+Post/ nocase wide ascii
        $send_hook = /(discord(app)?\.com\/api\/webhooks|api\.telegram\.org\/bot)/ wide ascii
    condition:
        any of ($aws, $ssh, $hf_cache, $hf_legacy, $gcloud, $kube, $netrc, $docker, $git, $environ) and
        any of ($send_*)
}
