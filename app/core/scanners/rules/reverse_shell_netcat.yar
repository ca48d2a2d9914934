rule reverse_shell_netcat
{
    meta:
        id = "reverse-shell-netcat"
        description = "netcat/ncat/socat handing a shell to a remote host (nc -e, mkfifo pipe, socat exec)"
        severity = "critical"
    strings:
        $nc_exec = /\b(nc|ncat|netcat)(\.exe)?\s[^\n]{0,80}-[ec]\s*\S*(\/bin\/|cmd\.exe|powershell)/ nocase wide ascii
        $ncat_exec = /\bncat\b[^\n]{0,80}--(exec|sh-exec)\b/ nocase wide ascii
        $fifo_pipe = /mkfifo\s+\/tmp\/[^\n]{0,160}\|\s*(nc|ncat|netcat)\s/ wide ascii
        $socat = /\bsocat\b[^\n]{0,160}\bexec:[^\n]{0,40}(sh|bash)/ nocase wide ascii
    condition:
        any of them
}
