rule persistence_unix
{
    meta:
        id = "persistence-unix"
        description = "Survives reboots or logins: cron, shell rc files with payloads, systemd units, authorized_keys, ld.so.preload"
        severity = "high"
    strings:
        $cron_pipe = /\(\s*crontab\s+-l[^\n]{0,200}\)\s*\|\s*crontab\s+-/ wide ascii
        $cron_file = /echo\s+["'][^"'\n]{0,40}(@reboot|\*\s+\*\s+\*\s+\*\s+\*)[^"'\n]{0,300}["']\s*>>?\s*\/(etc\/crontab|etc\/cron\.d\/|var\/spool\/cron)/ wide ascii
        $cron_reboot = /@reboot\s+[^\n]{0,200}(curl|wget|\bnc\s|python[0-9.]*\s+-c|\/tmp\/|base64|\/dev\/shm)/ wide ascii
        $rc_payload = /echo\s+["'][^"'\n]{0,300}(curl|wget|\bnc\s|base64|\/dev\/tcp|nohup|python[0-9.]*\s+-c|\/tmp\/|\/dev\/shm)[^"'\n]{0,300}["']\s*>>\s*\S{0,60}\.(bashrc|bash_profile|bash_login|profile|zshrc|zprofile)\b/ wide ascii
        $authorized_keys = />>\s*\S{0,60}\.ssh\/authorized_keys/ wide ascii
        $preload = "/etc/ld.so.preload" wide ascii
        $rc_local = />>?\s*\/etc\/rc\.local/ wide ascii
        $systemd_user = /\.config\/systemd\/user\/[\w.\-]+\.service/ wide ascii
        $systemctl = /systemctl\s+(--user\s+)?enable\b/ wide ascii
        $systemd_exec = /ExecStart\s*=\s*[^\n]{0,200}(\/tmp\/|\/dev\/shm\/|curl|wget|base64|\bnc\s)/ wide ascii
    condition:
        $cron_pipe or $cron_file or $cron_reboot or $rc_payload or $authorized_keys or $preload or
        $rc_local or $systemd_exec or ($systemd_user and $systemctl)
}
