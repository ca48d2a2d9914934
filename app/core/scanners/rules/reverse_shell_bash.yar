rule reverse_shell_bash
{
    meta:
        id = "reverse-shell-bash"
        description = "Interactive shell wired to a network socket through bash's /dev/tcp or /dev/udp"
        severity = "critical"
    strings:
        $interactive = /\b(ba|z|k)?sh\s+-i\s*[0-9]?[<>]&?\s*\/dev\/(tcp|udp)\/[A-Za-z0-9.\-]{1,253}\/[0-9]{1,5}/ wide ascii
        $fd_redirect = /\/dev\/(tcp|udp)\/[A-Za-z0-9.\-]{1,253}\/[0-9]{1,5}[^\n]{0,12}[0-9][<>]&[0-9]/ wide ascii
        $exec_fd = /exec\s+[0-9]+<>\s*\/dev\/(tcp|udp)\// wide ascii
    condition:
        any of them
}
