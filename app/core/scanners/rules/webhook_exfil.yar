rule webhook_exfil
{
    meta:
        id = "webhook-exfil"
        description = "Hard-coded Discord/Telegram/Slack bot or webhook endpoint with its secret: a common exfil channel"
        severity = "high"
    strings:
        $discord = /https?:\/\/(ptb\.|canary\.)?discord(app)?\.com\/api\/webhooks\/[0-9]{5,}\/[A-Za-z0-9_\-]{20,}/ wide ascii
        $telegram = /api\.telegram\.org\/bot[0-9]{5,}:[A-Za-z0-9_\-]{20,}\/(sendMessage|sendDocument|sendPhoto|sendMediaGroup)/ wide ascii
        $slack = /hooks\.slack\.com\/services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{16,}/ wide ascii
    condition:
        any of them
}
