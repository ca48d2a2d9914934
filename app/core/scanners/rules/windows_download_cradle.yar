rule windows_download_cradle
{
    meta:
        id = "windows-download-cradle"
        description = "Windows living-off-the-land downloaders and encoded PowerShell (certutil, bitsadmin, mshta, -enc)"
        severity = "critical"
    strings:
        $certutil = /certutil(\.exe)?\s+[^\n]{0,40}-urlcache\b[^\n]{0,40}\s-f\s+["']?https?:\/\// nocase wide ascii
        $bitsadmin = /bitsadmin(\.exe)?\s+\/transfer\b[^\n]{0,200}https?:\/\// nocase wide ascii
        $mshta = /mshta(\.exe)?\s+["']?(https?|javascript|vbscript):/ nocase wide ascii
        $regsvr32 = /regsvr32(\.exe)?\s+[^\n]{0,60}\/i:https?:\/\// nocase wide ascii
        $rundll32 = /rundll32(\.exe)?\s+javascript:/ nocase wide ascii
        $encoded = /powershell(\.exe)?\s+[^\n]{0,100}\s-(e|ec|enc|encodedcommand)\s+[A-Za-z0-9+\/=]{20,}/ nocase wide ascii
        $hidden = /powershell(\.exe)?\s+[^\n]{0,60}-w(indowstyle)?\s+hidden\b[^\n]{0,200}(iwr|Invoke-WebRequest|DownloadString|DownloadFile|Start-Process)/ nocase wide ascii
    condition:
        any of them
}
