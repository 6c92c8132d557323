// URLs of the platform's web pages and images that appear in API answers. They are derived from
// ids and the configured site URL (HELIXD_SITE_URL), never stored, so an operator can move the
// site without rewriting data.
export class Links {
  constructor(private readonly site: string) {}

  clip(id: string): string {
    return `${this.site}/clip/${id}`;
  }
  /** where the clip's creator edits it (Create Clip's `edit_url`): its page, then `/edit`, as production's */
  clipEdit(id: string): string {
    return `${this.clip(id)}/edit`;
  }
  clipEmbed(id: string): string {
    return `${this.site}/embed/clip?clip=${id}`;
  }
  clipThumbnail(id: string): string {
    return `${this.site}/media/clips/${id}/preview-480x272.jpg`;
  }
  video(id: number | string): string {
    return `${this.site}/videos/${id}`;
  }
  /** with Helix's `%{width}x%{height}` placeholders */
  videoThumbnail(userLogin: string, id: number | string): string {
    return `${this.site}/media/videos/${userLogin}_${id}-%{width}x%{height}.jpg`;
  }
  /** a marker's link: the video at the marker's position, `?t=1h2m3s` */
  marker(videoId: number | string, positionSeconds: number): string {
    return `${this.site}/videos/${videoId}?t=${hms(positionSeconds)}`;
  }
  /** a frame of a live stream, with Helix's `{width}x{height}` placeholders; named by the channel's login */
  streamThumbnail(userLogin: string): string {
    return `${this.site}/media/previews/live_user_${userLogin}-{width}x{height}.jpg`;
  }
  /** a user's profile picture (Helix gives it at 300x300, without placeholders) */
  profileImage(userId: number | string): string {
    return `${this.site}/media/users/${userId}/profile-300x300.png`;
  }
  /** the picture a channel shows while it is offline (Helix: 1920x1080, without placeholders) */
  offlineImage(userId: number | string): string {
    return `${this.site}/media/users/${userId}/offline-1920x1080.png`;
  }
  /** with Helix's `{width}x{height}` placeholders */
  boxArt(gameId: number | string): string {
    return `${this.site}/media/box-art/${gameId}-{width}x{height}.jpg`;
  }
  /** the same picture at one size, as Helix's search answers it (`52x72`) */
  boxArtAt(gameId: number | string, width: number, height: number): string {
    return `${this.site}/media/box-art/${gameId}-${width}x${height}.jpg`;
  }
}

/** 3723 -> "1h2m3s", the form of video durations and marker offsets. */
export function hms(total: number): string {
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}
