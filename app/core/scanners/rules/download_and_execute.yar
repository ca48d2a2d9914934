rule download_and_execute
{
    meta:
        id = "download-and-execute"
        description = "Downloads a script or program and runs it at once (curl|sh, iex(iwr), exec(urlopen()))"
        severity = "critical"
        // Text the links scanner reads (cards, scripts, Dockerfiles...) has its shell parsed there, the
        // one home of this rule for such files; this rule judges every other file (pickles, binaries).
        text_home = "links"
    strings:
        $pipe_shell = /\b(curl|wget)\b[^|\n]{1,300}\|\s*(sudo\s+(-\S+\s+)*)?(\/usr\/bin\/|\/bin\/)?(ba|z|da|k)?sh\b/ nocase wide ascii
        // The official installers below are piped to sh by design; they are subtracted from $pipe_shell.
        $pipe_official = /\b(curl|wget)\b[^|\n]{0,60}https:\/\/(astral\.sh\/uv\/|ollama\.com\/install\.sh|sh\.rustup\.rs)[^|\n]{0,200}\|\s*(sudo\s+(-\S+\s+)*)?(\/usr\/bin\/|\/bin\/)?(ba|z|da|k)?sh\b/ nocase wide ascii
        $pipe_python = /\b(curl|wget)\b[^|\n]{1,300}\|\s*(sudo\s+)?python[0-9.]*\b/ nocase wide ascii
        $proc_subst = /\b(ba|z)?sh\s+<\(\s*(curl|wget)\b/ wide ascii
        $cmd_subst = /(\bsh\s+-c|\beval|python[0-9.]*\s+-c)\s+["']?\$\(\s*(curl|wget)\b/ wide ascii
        $base64_shell = /base64\s+(-d|--decode)\b[^\n]{0,100}\|\s*(ba|z)?sh\b/ wide ascii
        $iex_download = /\b(iex|Invoke-Expression)\b[^\n]{0,200}(DownloadString|Invoke-WebRequest|\biwr\b|\birm\b|Invoke-RestMethod)/ nocase wide ascii
        $download_iex = /(DownloadString|Invoke-WebRequest|Invoke-RestMethod|\biwr\b|\birm\b)[^\n]{0,200}\|\s*(iex|Invoke-Expression)\b/ nocase wide ascii
        $py_urlopen = /\bexec\s*\(\s*(urllib\.request\.)?urlopen\s*\(/ wide ascii
        $py_requests = /\bexec\s*\(\s*requests\.get\s*\([^\n]{0,200}\)\.(text|content)/ wide ascii
    condition:
        #pipe_shell > #pipe_official or
        any of ($pipe_python, $proc_subst, $cmd_subst, $base64_shell, $iex_download, $download_iex, $py_urlopen, $py_requests)
}
